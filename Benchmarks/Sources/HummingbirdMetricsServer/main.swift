import Hummingbird
import MetricsFixture
import WeavePrometheus

// The same /metrics and /livez as NIOMetricsServer, served by Hummingbird 2 (default traits off,
// so no swift-configuration and no full Foundation). Usage: HummingbirdMetricsServer PORT

let port = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 9500
let fixture = MetricsFixture(services: 1_000)
let router = Router()
router.get("livez") { _, _ in "ok" }
router.get("metrics") { request, _ -> Response in
    let format = Exposition.Format.negotiate(accept: request.headers[.accept])
    let body = Exposition.render(fixture.families() + ProcessMetrics.families(), format: format)
    return Response(status: .ok, headers: [.contentType: format.contentType], body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
}
let app = Application(router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
