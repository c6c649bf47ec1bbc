import WeaveHealthServer
import WeaveSupport

/// Built-in defaults of weave-healthd.
enum Defaults {
    /// 9096: free in Prometheus's default port allocations (core components use 9090–9094; the
    /// exporter range 9100–9999 is fully allocated).
    static let port = 9096

    static let version = WeaveVersion.text

    /// A check's interval and timeout when the configuration gives none.
    static let checkInterval = Duration.seconds(15)
    static let checkTimeout = Duration.seconds(5)

    /// The configuration used without `--config`: loopback only, the applications that put a socket
    /// in /run/weave/apps, and checks of the machine and the daemon itself.
    static let configuration = """
        # weave-healthd embedded default configuration
        listen:
          - address: 127.0.0.1:\(port)
        details: always
        slow_resolution_threshold: 10ms
        apps:
          directory: \(AppSocket.defaultDirectory)
          timeout: 2s
          budget: 5s
          health_interval: 1s
        checks:
          - name: memory-pressure
            type: memory_pressure
            warn_avg10: 10
            fail_avg10: 40
            interval: 10s
          - name: disk-root
            type: disk
            path: /
            warn_free_percent: 10
            fail_free_percent: 5
            interval: 30s
          - name: container
            type: container
            interval: 10s
            groups: [live]
          - name: self-port
            type: tcp
            host: 127.0.0.1
            port: \(port)
            timeout: 1s
            interval: 10s

        """
}
