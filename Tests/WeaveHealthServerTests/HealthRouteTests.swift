import Foundation
import Testing
@testable import WeaveHealthServer

@Suite struct HealthRouteTests {
    /// docs/endpoints.md's table lists exactly the routes the router answers: path, methods, formats.
    @Test func theDocumentedTableIsTheRouteTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/endpoints.md"), encoding: .utf8)
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| `/") }.map { line in
            line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let documented = rows.map { [$0[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")), $0[1], $0[2]] }
        let declared = HealthRoute.all.map { [$0.path, $0.methods.joined(separator: ", "), $0.formats.joined(separator: ", ")] }
        #expect(documented == declared)
    }

    @Test func pathsFindTheirRoutes() {
        #expect(HealthRoute.route(for: "/")?.handler == .page)
        #expect(HealthRoute.route(for: "/readyz")?.handler == .readyz)
        #expect(HealthRoute.route(for: "/readyz/orders/db")?.handler == .readyzOne)
        #expect(HealthRoute.route(for: "/readyz/") == nil)
        #expect(HealthRoute.route(for: "/metrics/") == nil)
        #expect(HealthRoute.route(for: "metrics") == nil)
        #expect(HealthRoute.all.filter(\.isProbe).map(\.path) == ["/livez", "/readyz", "/readyz/<name>"])
        #expect(HealthRouter.mountedRoutes.map(\.path) == ["/metrics", "/health", "/livez", "/readyz", "/readyz/<name>", "/dependencies", "/events"])
    }
}
