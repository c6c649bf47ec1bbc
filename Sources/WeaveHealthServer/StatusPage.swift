/// What a server shows at `/` instead of the small default page: weave-healthd's status page.
public protocol StatusPage: Sendable {
    /// The page for `request`; `details` says whether this client may see reasons (the server's
    /// `details:` policy and token, as for `/health`).
    func render(_ request: HealthRequest, details: Bool) async -> HealthResponse
}
