// Built with the package trait Hummingbird only (`traits: ["Hummingbird"]` on the dependency).
#if Hummingbird
import HTTPTypes
public import Hummingbird
public import WeaveHealthRoutes

extension RouterMethods {
    /// Mounts a `HealthRouter`'s endpoints (an `AppEndpoint`'s `router`) in this Hummingbird router:
    /// by default the probes (`/health`, `/livez`, `/readyz`, `/readyz/<check>`); with `.all`,
    /// `/metrics`, `/dependencies`, `/events` and any route added as a row too, for a port only
    /// trusted scrapers reach. For their methods, with `?verbose` and `?exclude=` as on the
    /// endpoint's own socket.
    ///
    /// ```swift
    /// router.addWeaveHealthRoutes(endpoint.router)
    /// ```
    @discardableResult
    public func addWeaveHealthRoutes(_ health: HealthRouter, _ mount: HealthRouter.Mount = .probes) -> Self {
        for route in health.mountedRoutes(mount) {
            let path = RouterPath("/" + route.components.joined(separator: "/"))
            for method in route.methods.compactMap({ HTTPRequest.Method(rawValue: $0) }) {
                on(path, method: method) { request, _ -> Response in
                    let headers = request.headers.map { ($0.name.rawName, $0.value) }
                    let answer = await health.handle(HealthRequest(method: request.method.rawValue, uri: request.uri.description,
                                                                   headers: headers))
                    var fields = HTTPFields()
                    for (name, value) in answer.headers {
                        guard let name = HTTPField.Name(name) else { continue }
                        fields.append(HTTPField(name: name, value: value))
                    }
                    return Response(status: HTTPResponse.Status(code: answer.status), headers: fields,
                                    body: ResponseBody(byteBuffer: answer.body))
                }
            }
        }
        return self
    }
}

#endif
