import Dependencies
import WeaveDI

extension Dependency {
    /// `@Dependency(ExchangeUseCaseKey.self)` for an `InjectedKey` that is also a swift-dependencies
    /// key: reads `DependencyValues[key]` as WeaveDependencies defines it (served by WeaveDI's
    /// registrations), where swift-dependencies' own initializer would read only its cached `liveValue`.
    public init<Key: InjectedKey & TestDependencyKey>(
        _ key: Key.Type,
        fileID: StaticString = #fileID,
        filePath: StaticString = #filePath,
        line: UInt = #line,
        column: UInt = #column
    ) where Key.Value == Value {
        self.init(\DependencyValues.[injected: InjectedKeyIdentity<Key>()], fileID: fileID, filePath: filePath, line: line, column: column)
    }
}
