// Built with the package trait Vapor only (`traits: ["Vapor"]` on the dependency).
#if Vapor
public import Vapor
public import WeaveAppEndpoint

extension RoutesBuilder {
    /// Mounts a `HealthRouter`'s endpoints (an `AppEndpoint`'s `router`) in this Vapor application
    /// or route group: by default the probes (`/health`, `/livez`, `/readyz`, `/readyz/<check>`);
    /// with `.all`, `/metrics`, `/dependencies`, `/events` and any route added as a row too, for a
    /// port only trusted scrapers reach. For their methods, with `?verbose` and `?exclude=` as on
    /// the endpoint's own socket (Vapor answers HEAD from GET, so HEAD is not registered).
    ///
    /// ```swift
    /// app.addWeaveHealthRoutes(endpoint.router)
    /// ```
    ///
    /// The same name as the Hummingbird adapter's. `Application.addWeaveEndpoint(_:)` runs the
    /// endpoint itself (its checks and its socket) in the application's lifecycle.
    public func addWeaveHealthRoutes(_ health: HealthRouter, _ mount: HealthRouter.Mount = .probes) {
        for route in health.mountedRoutes(mount) {
            let path = route.components.map { PathComponent(stringLiteral: $0) }
            for method in route.methods where method != "HEAD" {
                on(HTTPMethod(rawValue: method), path) { request async -> Response in
                    let headers = request.headers.map { ($0.name, $0.value) }
                    let answer = await health.handle(HealthRequest(method: request.method.rawValue, uri: request.url.string,
                                                                   headers: headers))
                    var fields = HTTPHeaders()
                    for (name, value) in answer.headers { fields.add(name: name, value: value) }
                    return Response(status: HTTPResponseStatus(statusCode: answer.status), headers: fields,
                                    body: Response.Body(buffer: answer.body))
                }
            }
        }
    }
}

#endif
