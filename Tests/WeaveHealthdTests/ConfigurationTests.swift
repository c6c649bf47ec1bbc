import Glibc
import NIOPosix
import Testing
import WeaveDI
import WeaveHealth
import WeaveHealthRoutes
import WeaveHealthServer
@testable import WeaveHealthd
import WeaveMemoryPressure
import WeaveObservability
import WeavePrometheus

@Suite struct ConfigurationTests {
    private func parse(_ text: String) throws(ConfigurationError) -> DaemonConfiguration {
        try ConfigurationLoader(file: "test.yaml", text: text).parse()
    }

    @Test func embeddedDefaultIsValid() throws {
        let configuration = try parse(Defaults.configuration)
        #expect(configuration.listeners == [.tcp(host: "127.0.0.1", port: 9096)])
        #expect(configuration.checks.map(\.name) == ["memory-pressure", "disk-root", "container", "self-port"])
        #expect(configuration.checks[2].settings.groups == ["live"])
    }

    @Test func fullConfiguration() throws {
        let configuration = try parse("""
            listen:
              - address: "[::1]:9200"
              - unix: /run/weave/health.sock
                mode: "0640"
            details: when-authorized
            bearer_token_file: /etc/weave/token
            slow_resolution_threshold: 250us
            memory_pressure:
              trigger: some 100000 2000000
            status_codes: {pass: 200, warn: 299, fail: 500}
            metrics:
              resolve_buckets: 10
            checks:
              - name: web
                type: http
                url: http://localhost:8080/healthz
                expect_status: 200-204
                body_contains: ok
                interval: 2s
                timeout: 500ms
                failures_before_unhealthy: 3
                successes_before_healthy: 2
                groups: [ready, edge]
              - name: disk
                type: exec
                command: /usr/lib/nagios/plugins/check_disk -w 10% -c 5% -p /
            """)
        #expect(configuration.listeners == [.tcp(host: "::1", port: 9200), .unix(path: "/run/weave/health.sock", mode: 0o640)])
        #expect(configuration.detailsPolicy == .whenAuthorized)
        #expect(configuration.slowResolutionThreshold == .microseconds(250))
        #expect(configuration.statusCodes == (200, 299, 500))
        #expect(configuration.resolveBuckets == .slowest(10))
        #expect(try parse("checks: []\n").resolveBuckets == .default)
        let web = configuration.checks[0]
        #expect(web.settings == HealthCheckSettings(interval: .seconds(2), timeout: .milliseconds(500), failuresBeforeUnhealthy: 3,
                                                     successesBeforeHealthy: 2, groups: ["ready", "edge"]))
        let http = try #require(web.options as? HTTPCheck.Options)
        #expect(http.url == HTTPURL("http://localhost:8080/healthz") && http.url.hostHeader == "localhost:8080")
        #expect(http.expectedStatus == 200...204 && http.bodyContains == "ok")
        let exec = try #require(configuration.checks[1].options as? ExecCheck.Options)
        #expect(exec.command == ["/usr/lib/nagios/plugins/check_disk", "-w", "10%", "-c", "5%", "-p", "/"])
    }

    @Test(arguments: [
        ("checks:\n  - name: a\n    type: disk\n    colour: red\n", "test.yaml:4:5: unknown key 'colour'"),
        ("checks:\n  - name: a\n    type: dsk\n", "test.yaml:3:11: unknown check type 'dsk'"),
        ("checks:\n  - name: a\n    type: disk\n    interval: soon\n", "test.yaml:4:15: expected a positive duration"),
        // Lower bounds: a loop that runs every microsecond holds a core.
        ("checks:\n  - name: a\n    type: disk\n    interval: 1us\n", "test.yaml:4:15: '1us' is too short: at least 100ms"),
        ("checks:\n  - name: a\n    type: disk\n    timeout: 1ms\n", "test.yaml:4:14: '1ms' is too short: at least 10ms"),
        ("apps:\n  health_interval: 0.000000001s\n", "test.yaml:2:20: '0.000000001s' is too short: at least 100ms"),
        ("apps:\n  timeout: 1us\n", "test.yaml:2:12: '1us' is too short: at least 10ms"),
        ("apps:\n  budget: 50ms\n", "test.yaml:2:11: '50ms' is too short: at least 100ms"),
        ("checks:\n  - {name: \(String(repeating: "c", count: 129)), type: disk}\n", "test.yaml:2:12: a check name is at most 128 bytes (this one is 129)"),
        ("listen:\n  - address: localhost\n", "test.yaml:2:14: address must be host:port"),
        ("details: sometimes\n", "test.yaml:1:10: details must be one of"),
        ("checks:\n  - name: a\n    type: http\n    url: http://x/\n    ca_file: /ca.pem\n", "test.yaml:5:14: ca_file applies to https:// URLs only"),
        ("checks:\n  - name: a\n    type: http\n    url: https://x/\n    warn_days: 1\n    fail_days: 2\n", "test.yaml:6:16: fail_days (2) must not exceed warn_days (1)"),
        ("checks:\n  - name: a\n    type: http\n    url: https://x/\n    client_cert: /c.pem\n", "test.yaml:5:18: client_cert and client_key go together"),
        ("checks:\n  - name: a\n    type: exec\n    command: check_disk\n", "test.yaml:4:14: command must start with an absolute path"),
        ("checks:\n  - {name: a, type: disk}\n  - {name: a, type: disk}\n", "test.yaml:3:5: a check named 'a' already exists"),
        ("checks: [\n", "test.yaml:2:1: YAML"),
        ("", "test.yaml:1:1: the configuration is empty"),
        ("apps:\n  targets:\n    - {name: a, socket: /x, url: \"http://h:1/\"}\n", "test.yaml:3:7: application 'a' needs exactly one of"),
        ("apps:\n  targets:\n    - {name: ../a, socket: /x}\n", "test.yaml:3:14: an application name uses"),
        ("apps:\n  targets:\n    - {name: a, socket: /x}\n    - {name: a, socket: /y}\n", "test.yaml:4:7: an application named 'a' already exists"),
        ("apps:\n  timeout: 10s\n  budget: 5s\n", "test.yaml:2:12: apps: timeout"),
        ("apps:\n  directory: relative\n", "test.yaml:2:14: directory must be an absolute path"),
        ("apps:\n  max_response_bytes: 99999999999999999999\n", "test.yaml:2:23: expected a whole number"),
        ("apps:\n  max_scrape_bytes: 99999999999999999999\n", "test.yaml:2:21: expected a whole number"),
        ("apps:\n  max_scrape_bytes: 1048576\n", "test.yaml:2:21: apps: max_response_bytes (4194304) must not exceed max_scrape_bytes (1048576)"),
        ("apps:\n  max_response_bytes: 2097152\n  max_scrape_bytes: 1048576\n", "test.yaml:2:23: apps: max_response_bytes (2097152) must not exceed"),
        ("apps:\n  directroy: /x\n", "test.yaml:2:3: unknown key 'directroy'; did you mean 'directory'?"),
        ("metrics:\n  resolve_buckets: some\n", "test.yaml:2:20: resolve_buckets must be all, none, or a whole number N"),
        ("metrics:\n  resolve_buckets: 99999999999999999999\n", "test.yaml:2:20: resolve_buckets must be all, none"),
        ("metrics:\n  resolve_bucket: none\n", "test.yaml:2:3: unknown key 'resolve_bucket'; did you mean 'resolve_buckets'?"),
    ])
    func errorsArePositioned(text: String, expected: String) {
        do {
            _ = try parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.hasPrefix(expected), "\(error)")
        }
    }

    /// One list names every check type; the loader takes its keys and the "unknown type" message from it.
    @Test func textfileDirectory() throws {
        #expect(try parse("checks: []").textfile == nil)
        let textfile = try parse("textfile: {directory: /var/lib/weave/textfile, max_file_bytes: 65536}").textfile
        #expect(textfile == TextfileConfiguration(directory: "/var/lib/weave/textfile", maxFileBytes: 65_536, maxTotalBytes: 16 << 20))
        for (text, message) in [("textfile: {directory: textfile}", "1:23: directory must be an absolute path"),
                                ("textfile: {max_file_bytes: 4096}", "1:11: textfile: needs a directory"),
                                ("textfile: {directory: /t, max_file_bytes: 65536, max_total_bytes: 4096}",
                                 "1:43: textfile: max_file_bytes (65536) must not exceed max_total_bytes (4096)"),
                                ("textfile: {directory: /t, files: 3}", "1:27: unknown key 'files'")] {
            do {
                _ = try parse(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect("\(error)".contains(message), "\(error)")
            }
        }
    }

    /// What a file leaves out is the libraries' own default, from the libraries themselves.
    @Test func leftOutKeysTakeTheLibrariesDefaults() throws {
        let configuration = try parse("checks: []\n")
        #expect(configuration.memoryPressureTrigger == MemoryPressureConfiguration().trigger)
        #expect(configuration.statusCodes == HealthPolicy().statusCodes)
        #expect(configuration.slowResolutionThreshold == InstrumentationSettings.default.slowResolutionThreshold)
        #expect(configuration.logRateLimit == InstrumentationSettings.default.logRateLimit)
        let partial = try parse("status_codes: {fail: 500}\n").statusCodes
        #expect(partial == (HealthPolicy().statusCodes.pass, HealthPolicy().statusCodes.warn, 500))
    }

    /// A reload's refusal names the key it is about, and points at its line in the new file.
    @Test func aReloadRefusalPointsAtTheChangedKey() async throws {
        let running = try parse("listen:\n  - address: 127.0.0.1:9096\n")
        let changed = try parse("checks: []\nlisten:\n  - address: 127.0.0.1:9097\nmemory_pressure: {trigger: \"some 100000 1000000\"}\n")
        let runtime = await Runtime(configuration: running, shared: DaemonShared(group: MultiThreadedEventLoopGroup.singleton,
                                                                                   connections: ConnectionPool(capacity: 1), blocking: BlockingCalls()))
        let listen = try #require(runtime.refusal(of: changed, listeners: running.listeners, socketActivated: false))
        #expect(listen.key == "listen" && changed.positions["listen"]?.line == 3, "\(listen)")
        let pressure = try #require(runtime.refusal(of: changed, listeners: running.listeners, socketActivated: true),
                                    "systemd's sockets: listen: is not used")
        #expect(pressure.key == "memory_pressure" && changed.positions["memory_pressure"]?.line == 4, "\(pressure)")
        #expect(runtime.refusal(of: running, listeners: running.listeners, socketActivated: false) == nil)
    }

    @Test func checkTypesComeFromOneList() throws {
        let names = CheckTypes.all.map { $0.typeName }
        #expect(Set(names).count == names.count)
        // Every type declared in the sources is listed, and declared in its own file under Checks/.
        let declared = try CheckTypeSources.declared()
        #expect(declared.count >= 9 && Set(names) == Set(declared.map(\.typeName)), "\(declared)")
        for type in declared {
            #expect(type.file.hasPrefix("Checks/") && type.file.hasSuffix("Check.swift"), "\(type.typeName) in \(type.file)")
        }
        #expect(Set(declared.map(\.file)).count == declared.count, "one type per file")
        #expect(throws: ConfigurationError.self) { try parse("checks:\n  - {name: a, type: tcp, host: h, port: 1, path: /}\n") }
        do {
            _ = try parse("checks:\n  - {name: a, type: nope}\n")
            Issue.record("an unknown type was accepted")
        } catch {
            #expect(error.message == "unknown check type 'nope'; use \(names.joined(separator: ", "))")
        }
        let dns = try #require(try parse("checks:\n  - {name: d, type: dns, host: localhost, expect_address: [127.0.0.1, \"0:0::1\"]}\n")
            .checks[0].options as? DNSCheck.Options)
        #expect(dns.host == "localhost" && dns.expectedAddresses == ["127.0.0.1", "::1"])
        #expect(throws: ConfigurationError.self) { try parse("checks:\n  - {name: d, type: dns, host: x, expect_address: nowhere}\n") }
    }

    @Test func dnsCheckComparesTheAnswer() async {
        let observations = Observations()
        let found = await DNSCheck(name: "d", host: "localhost", expectedAddresses: ["127.0.0.1"], timeout: .seconds(5), blocking: BlockingCalls(), observations: observations).healthCheck()
        #expect(found.state == .healthy, "\(found)")
        let wrong = await DNSCheck(name: "d", host: "localhost", expectedAddresses: ["192.0.2.7"], timeout: .seconds(5), blocking: BlockingCalls(), observations: observations).healthCheck()
        #expect(wrong.state == .unhealthy && wrong.reason?.contains("without 192.0.2.7") == true, "\(wrong)")
    }

    /// `ca_file` is read when the configuration is loaded: a FIFO, a directory, a missing file, one
    /// past the limit or one without a certificate is a positioned error, and nothing blocks.
    @Test func caFileIsARegularBoundedFileOfCertificates() throws {
        let directory = "/tmp/weave-ca-\(getpid())"
        mkdir(directory, 0o700)
        defer {
            for name in ["fifo.pem", "garbage.pem", "ca.pem", "huge.pem"] { unlink(directory + "/" + name) }
            rmdir(directory)
        }
        mkfifo(directory + "/fifo.pem", 0o600)
        func write(_ name: String, _ text: String) {
            let file = fopen(directory + "/" + name, "w")!
            fputs(text, file)
            fclose(file)
        }
        write("garbage.pem", "not a certificate\n")
        write("ca.pem", "-----BEGIN CERTIFICATE-----\nMII=\n-----END CERTIFICATE-----\n")
        write("huge.pem", "")
        #expect(truncate(directory + "/huge.pem", 100 << 20) == 0) // sparse: refused on its size, never read
        func check(_ file: String) -> String {
            do {
                _ = try parse("checks:\n  - name: a\n    type: http\n    url: https://x/\n    ca_file: \(file)\n")
                return "accepted"
            } catch {
                return "\(error)"
            }
        }
        #expect(check(directory + "/fifo.pem").hasPrefix("test.yaml:5:14: ca_file \(directory)/fifo.pem cannot be used: it is a FIFO, not a regular file"))
        #expect(check(directory).contains("it is a directory, not a regular file"))
        #expect(check(directory + "/missing.pem").contains("cannot be used: No such file"))
        #expect(check(directory + "/huge.pem").contains("is 104857600 bytes, more than the 4194304 allowed"))
        #expect(check(directory + "/garbage.pem").contains("holds no PEM certificate"))
        #expect(check(directory + "/ca.pem") == "accepted")
    }

    @Test func durationsAndURLs() {
        #expect(ConfigurationLoader.parseDuration("1.5s") == .milliseconds(1_500))
        #expect(ConfigurationLoader.parseDuration("2m") == .seconds(120))
        #expect(ConfigurationLoader.parseDuration("3") == .seconds(3))
        #expect(ConfigurationLoader.parseDuration("x") == nil)
        #expect(HTTPURL("http://[::1]:8080/a")?.hostHeader == "[::1]:8080")
        #expect(HTTPURL("http://example:80")?.hostHeader == "example")
        #expect(HTTPURL("http://:80/") == nil)
        #expect(ConfigurationLoader.parseAddress(":9000") == nil)
    }
}

@Suite struct NagiosOutputTests {
    @Test func firstLineIsTheReasonAndPerfdataIsConverted() {
        let output = NagiosOutput("DISK OK - free space: / 3326 MB (56%); | /=2643MB;5948;5958;0;5968 'time taken'=12ms;;; load=80% c=5c\nlong output\n")
        #expect(output.text == "DISK OK - free space: / 3326 MB (56%);")
        #expect(output.perfdata.map(\.label) == ["/", "time taken", "load", "c"])
        #expect(output.perfdata.map(\.value) == [2_643_000_000, 0.012, 0.8, 5])
        #expect(output.perfdata.map(\.kind) == [.bytes, .seconds, .ratio, .counter])
        #expect(Perfdata.parse("users=3").map(\.kind) == [.plain])
    }

    @Test func malformedPerfdataIsSkipped() {
        #expect(NagiosOutput("OK | garbage 'unterminated=1").perfdata.isEmpty)
        #expect(NagiosOutput("OK | a=1parsec b=2").perfdata.map(\.label) == ["b"])
        #expect(NagiosOutput("").text == "")
    }
}
