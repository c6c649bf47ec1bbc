import WeaveDI
import XCTest

// Upstream WeaveDI's documentation, as its Swift 5 sections write it (this target builds in the
// Swift 5 language mode); each pattern runs in a container of its own (`withContainer`).

protocol UserService { func name(of id: Int) -> String }
final class UserServiceImpl: UserService { func name(of id: Int) -> String { "user \(id)" } }
protocol OrderService { func total() -> Int }
final class OrderServiceImpl: OrderService { func total() -> Int { 42 } }
protocol Logger { func log(_ message: String) }
final class ConsoleLogger: Logger { func log(_ message: String) {} }
final class UserRepository {}
final class PDFGenerator {}

protocol ExchangeUseCase { func rate() -> Double }
final class ExchangeUseCaseImpl: ExchangeUseCase { func rate() -> Double { 1.25 } }
final class ContainerExchange: ExchangeUseCase { func rate() -> Double { 2.5 } }

struct ExchangeUseCaseKey: InjectedKey {
    static var liveValue: ExchangeUseCase = ExchangeUseCaseImpl()
}

extension InjectedValues {
    var exchangeUseCase: ExchangeUseCase {
        get { self[ExchangeUseCaseKey.self] }
        set { self[ExchangeUseCaseKey.self] = newValue }
    }
}

// A key whose value is optional, and a wrapper on a key without a type annotation.
struct LoggerKey: InjectedKey {
    static var liveValue: Logger? = nil
}

extension InjectedValues {
    var logger: Logger? {
        get { self[LoggerKey.self] }
        set { self[LoggerKey.self] = newValue }
    }
}

final class KeyedViewModel {
    @Injected(ExchangeUseCaseKey.self) var exchange
    @Injected(\.logger) var logger
}

// "extension WeaveDI { static func registerTCADependencies() … }"
extension WeaveDI {
    static func registerTCADependencies() {
        builder
            .register { UserServiceImpl() as UserService }
            .register { ConsoleLogger() as Logger }.scoped(.singleton)
            .configure()
    }
}

extension WeaveDI.Container {
    var userRepository: UserRepository? { resolve(UserRepository.self) }
}

// Several modules, each configuring its own services through bootstrap.
enum UserModule {
    static func bootstrap() async {
        await WeaveDI.Container.bootstrap { container in
            container.register(UserService.self) { UserServiceImpl() }
        }
    }
}

enum OrderModule {
    static func bootstrap() async {
        await WeaveDI.Container.bootstrap { container in
            container.register(OrderService.self) { OrderServiceImpl() }
        }
    }
}

final class ProfileViewModel {
    @Injected var userService: UserService
    @Injected(ExchangeUseCaseKey.self) var exchange: ExchangeUseCase
    @Injected(\.exchangeUseCase) var exchangeByKeyPath: ExchangeUseCase
    @Inject var logger: Logger?
    @SafeInject var orders: OrderService?
    @Factory var generator: PDFGenerator
    @Factory(\.userRepository) var repository: UserRepository
}

final class DocumentedPatternsTests: XCTestCase {
    func testNamespaceExtensionAndBuilder() {
        withContainer(WeaveDI.Container()) {
            WeaveDI.registerTCADependencies()
            XCTAssertEqual(UnifiedDI.resolve(UserService.self)?.name(of: 7), "user 7")
            XCTAssertNotNil(UnifiedDI.resolve(Logger.self))
        }
    }

    func testEveryModulesBootstrapSurvives() async {
        let container = WeaveDI.Container()
        await withContainer(container) {
            await UserModule.bootstrap()
            await OrderModule.bootstrap()
        }
        XCTAssertEqual(container.resolve(UserService.self)?.name(of: 1), "user 1")
        XCTAssertEqual(container.resolve(OrderService.self)?.total(), 42)
    }

    func testPropertyWrappersAsDocumented() throws {
        let container = WeaveDI.Container()
        container.register(UserService.self) { UserServiceImpl() }
        container.register(Logger.self, scope: .singleton) { ConsoleLogger() }
        container.register(PDFGenerator.self) { PDFGenerator() }
        container.register(UserRepository.self) { UserRepository() }
        try withContainer(container) {
            let model = ProfileViewModel()
            XCTAssertEqual(model.userService.name(of: 2), "user 2")
            XCTAssertEqual(model.exchange.rate(), 1.25)
            XCTAssertEqual(model.exchangeByKeyPath.rate(), 1.25)
            XCTAssertNotNil(model.logger)
            XCTAssertNil(model.orders)
            XCTAssertThrowsError(try model.orders.getValue())
            XCTAssertFalse(model.generator === model.generator)
            XCTAssertNotNil(model.repository)
        }
    }

    // The hybrid pattern: register in the container, read through the key path.
    func testContainerRegistrationReachesKeyPathReads() {
        let container = WeaveDI.Container()
        container.register(ExchangeUseCase.self) { ContainerExchange() }
        withContainer(container) {
            XCTAssertEqual(ProfileViewModel().exchangeByKeyPath.rate(), 2.5)
            XCTAssertEqual(ProfileViewModel().exchange.rate(), 2.5)
        }
    }

    func testKeysWithoutAnnotationsAndWithOptionalValues() {
        let container = WeaveDI.Container()
        withContainer(container) {
            let model = KeyedViewModel()
            let exchange: ExchangeUseCase = model.exchange // the key's value, not ExchangeUseCaseKey?
            XCTAssertEqual(exchange.rate(), 1.25)
            XCTAssertNil(model.logger)
        }
        container.register(Logger.self) { ConsoleLogger() }
        withContainer(container) {
            XCTAssertTrue(KeyedViewModel().logger is ConsoleLogger) // the registration of the wrapped type
        }
    }

    func testSynchronousResolveInAsyncCode() async {
        let container = WeaveDI.Container()
        if container.resolve(UserService.self) == nil {
            container.register(UserService.self) { UserServiceImpl() }
        }
        XCTAssertNotNil(container.resolve(UserService.self))
        await withContainer(container) {
            UnifiedDI.registerAsync(OrderService.self) { OrderServiceImpl() }
            let orders = try? await UnifiedDI.resolveAsync(OrderService.self)
            XCTAssertEqual(orders?.total(), 42)
        }
    }
}
