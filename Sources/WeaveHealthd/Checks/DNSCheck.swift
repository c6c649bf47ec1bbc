import WeaveHealth
import WeaveSupport

/// Resolves a name with the system resolver (`getaddrinfo`: /etc/hosts, then DNS as nsswitch.conf
/// says): healthy when it resolves and, if addresses are expected, the answer contains every one.
struct DNSCheck: HealthCheckable {
    let name: String
    let host: String
    let expectedAddresses: [String]
    let timeout: Duration
    let blocking: BlockingCalls
    let observations: Observations

    func healthCheck() async -> HealthStatus {
        let start = ContinuousClock.now
        let answer = await Self.addresses(of: host, key: "check \(name)", within: timeout, on: blocking)
        switch answer {
        case .failure(let failure):
            return .unhealthy(error: CheckFailure("cannot resolve \(host): \(failure.description)"))
        case .success(let addresses):
            observations.record(name, value: (ContinuousClock.now - start).totalSeconds, unit: "s")
            let missing = expectedAddresses.filter { !addresses.contains($0) }
            guard missing.isEmpty else {
                return .unhealthy(error: CheckFailure("\(host) resolves to \(addresses.joined(separator: ", ")), "
                                                      + "without \(missing.joined(separator: ", "))"))
            }
            return .healthy
        }
    }

    /// The numeric addresses `host` resolves to, without duplicates, in the resolver's order.
    /// getaddrinfo blocks, so it runs on `blocking`; after `timeout` the check stops waiting, and the
    /// thread ends with the resolver's own timeout (resolv.conf), the check not asking again meanwhile.
    static func addresses(of host: String, key: String, within timeout: Duration, on blocking: BlockingCalls) async
        -> Result<[String], CheckFailure> {
        do {
            return try await blocking.run(key, lane: .dns, deadline: timeout) { () -> Result<[String], CheckFailure> in
                var hints = addrinfo()
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                var list: UnsafeMutablePointer<addrinfo>?
                let status = getaddrinfo(host, nil, &hints, &list)
                guard status == 0 else { return .failure(CheckFailure(String(cString: gai_strerror(status)))) }
                defer { freeaddrinfo(list) }
                var addresses: [String] = []
                var entry = list
                while let current = entry {
                    if let text = numericHost(current.pointee.ai_addr, current.pointee.ai_addrlen), !addresses.contains(text) {
                        addresses.append(text)
                    }
                    entry = current.pointee.ai_next
                }
                return .success(addresses)
            }
        } catch {
            return .failure(CheckFailure("\(error)"))
        }
    }

    /// An address as getnameinfo prints it numerically (`127.0.0.1`, `::1`).
    static func numericHost(_ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `text` as getnameinfo would print it, or nil when it is not a numeric IPv4 or IPv6 address.
    static func canonicalAddress(_ text: String) -> String? {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(text, nil, &hints, &list) == 0, let first = list else { return nil }
        defer { freeaddrinfo(list) }
        return numericHost(first.pointee.ai_addr, first.pointee.ai_addrlen)
    }
}

extension DNSCheck {
    /// `type: dns`: `host` (the name to resolve), `expect_address` (one address or a list; all must be
    /// in the answer). The check's `timeout` bounds how long a lookup may take.
    struct Options: CheckOptions {
        static let typeName = "dns"
        static let keys: Set<String> = ["host", "expect_address"]
        let host: String
        let expectedAddresses: [String]

        init(_ fields: ConfigurationFields) throws(ConfigurationError) {
            host = try fields.loader.string(try fields.required("host"))
            guard !host.isEmpty else { throw fields.error("host", "host must not be empty") }
            var expected: [String] = []
            for text in try fields.strings("expect_address") ?? [] {
                guard let address = DNSCheck.canonicalAddress(text) else {
                    throw fields.error("expect_address", "expect_address must be IPv4 or IPv6 addresses, not '\(text)'")
                }
                expected.append(address)
            }
            expectedAddresses = expected
        }

        func makeCheck(_ context: CheckContext) -> any HealthCheckable {
            DNSCheck(name: context.name, host: host, expectedAddresses: expectedAddresses, timeout: context.timeout,
                     blocking: context.blocking, observations: context.observations)
        }
    }
}
