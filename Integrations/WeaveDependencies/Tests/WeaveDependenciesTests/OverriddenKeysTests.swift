import Testing
@testable import WeaveDependencies

@Suite struct OverriddenKeysTests {
    @Test func keysAreFoundOnceInsertedAndOthersAreNot() {
        enum A {}
        enum B {}
        enum C {}
        let keys = OverriddenKeys()
        #expect(!keys.contains(A.self))
        keys.insert(A.self)
        keys.insert(B.self)
        keys.insert(A.self) // again: already there
        #expect(keys.contains(A.self) && keys.contains(B.self))
        #expect(!keys.contains(C.self))
    }

    @Test func concurrentInsertsAllLand() async {
        let keys = OverriddenKeys()
        let types: [Any.Type] = [Int.self, String.self, Double.self, Float.self, Bool.self, UInt8.self, Int8.self, UInt16.self]
        await withTaskGroup(of: Void.self) { group in
            for type in types { group.addTask { keys.insert(type) } }
        }
        #expect(types.allSatisfy { keys.contains($0) })
        #expect(!keys.contains(Character.self))
    }
}
