import Logging
import WeaveSupport

/// An opened memory-pressure source: what to poll and how.
enum PressureWatch {
    /// A PSI file with a trigger: POLLPRI means pressure; `path` is read for the averages.
    case priority(fd: Int32, path: String)
    /// A FIFO or socket: POLLIN means pressure; what arrives is drained.
    case readable(fd: Int32)
    /// No trigger: `avg10` of `path` is read every `interval`.
    case polling(path: String, interval: Duration, threshold: Double)

    struct OpenError: Error, CustomStringConvertible {
        let description: String
        init(_ what: String) { description = "\(what): \(SystemError.text(errno))" }
        init(message: String) { description = message }
    }

    /// systemd's convention: a regular file gets `write` and is polled for POLLPRI; a FIFO or a
    /// socket is polled for POLLIN.
    static func systemd(path: String, write bytes: [UInt8]?) throws -> PressureWatch {
        var info = stat()
        guard stat(path, &info) == 0 else { throw OpenError("stat \(path)") }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { throw OpenError("open \(path)") }
            if let bytes, !bytes.isEmpty {
                guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
                    let error = OpenError("write MEMORY_PRESSURE_WRITE to \(path)")
                    close(fd)
                    throw error
                }
            }
            return .priority(fd: fd, path: path)
        case S_IFIFO:
            // Read-write, so that the FIFO always has a writer and never reports hang-up.
            let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { throw OpenError("open \(path)") }
            return .readable(fd: fd)
        case S_IFSOCK:
            return .readable(fd: try connectUnix(path))
        default:
            throw OpenError(message: "\(path) is neither a regular file, a FIFO nor a socket")
        }
    }

    /// A PSI trigger (`some 150000 1000000`) written to a pressure file.
    static func trigger(path: String, trigger: String) throws -> PressureWatch {
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw OpenError("open \(path)") }
        let written = trigger.withCString { write(fd, $0, strlen($0) + 1) }
        guard written > 0 else {
            let error = OpenError("write trigger to \(path)")
            close(fd)
            throw error
        }
        return .priority(fd: fd, path: path)
    }

    private static func connectUnix(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw OpenError("socket") }
        guard var address = sockaddr_un(path: path) else {
            close(fd)
            throw OpenError(message: "socket path too long: \(path)")
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else {
            let error = OpenError("connect \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// Closes the descriptor, if there is one.
    func release() {
        switch self {
        case .priority(let fd, _), .readable(let fd): close(fd)
        case .polling: break
        }
    }
}

/// The monitor's thread: polls the source and a wake-up pipe until stopped or the source is gone.
final class WatchLoop: @unchecked Sendable {
    // @unchecked: after `startThread()` every field is used only by the watching thread.
    private let monitor: MemoryPressureMonitor
    private let watch: PressureWatch
    private let source: MemoryPressureSource
    private let wakeFD: Int32
    private let detailsPath: String
    private let logger: Logger

    init(monitor: MemoryPressureMonitor, watch: PressureWatch, source: MemoryPressureSource, wakeFD: Int32,
         detailsPath: String = "/proc/pressure/memory", logger: Logger) {
        self.monitor = monitor
        self.logger = logger
        self.watch = watch
        self.source = source
        self.wakeFD = wakeFD
        self.detailsPath = detailsPath
    }

    func startThread() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            let loop = Unmanaged<WatchLoop>.fromOpaque(raw!).takeRetainedValue()
            loop.run()
            return nil
        }, context)
        if status == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<WatchLoop>.fromOpaque(context).release()
            logger.error("Could not start the memory-pressure thread: \(SystemError.text(status))")
        }
    }

    private func run() {
        defer {
            watch.release()
            close(wakeFD)
        }
        var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
        var timeout: Int32 = -1
        var aboveThreshold = false
        switch watch {
        case .priority(let fd, _): fds.append(pollfd(fd: fd, events: Int16(POLLPRI), revents: 0))
        case .readable(let fd): fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
        case .polling(_, let interval, _):
            timeout = Int32(clamping: interval.totalNanoseconds / 1_000_000)
        }
        while true {
            let ready = poll(&fds, nfds_t(fds.count), timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.error("Memory-pressure poll failed: \(SystemError.text(errno))")
                return
            }
            if fds[0].revents != 0 { return } // stop() was called
            switch watch {
            case .polling(let path, _, let threshold):
                guard let text = readTextFile(path), let reading = try? PressureStallInformation.parse(text) else { continue }
                if reading.some.avg10 >= threshold {
                    if !aboveThreshold { monitor.pressureReported(by: source, pressure: reading) }
                    aboveThreshold = true
                } else {
                    aboveThreshold = false
                }
            case .priority(_, let path):
                let events = Int32(fds[1].revents)
                if events & Int32(POLLERR) != 0 {
                    logger.warning("The memory-pressure trigger on \(path) is gone; monitoring stops")
                    return
                }
                if events & Int32(POLLPRI) != 0 {
                    monitor.pressureReported(by: source, pressure: readTextFile(path).flatMap { try? PressureStallInformation.parse($0) })
                }
            case .readable(let fd):
                let events = Int32(fds[1].revents)
                if events & Int32(POLLIN) != 0 {
                    var buffer = [UInt8](repeating: 0, count: 512)
                    var closed = false
                    while true {
                        let count = read(fd, &buffer, buffer.count)
                        if count == 0 { closed = true }
                        if count <= 0 { break }
                    }
                    monitor.pressureReported(by: source, pressure: readTextFile(detailsPath).flatMap { try? PressureStallInformation.parse($0) })
                    if closed {
                        logger.warning("The memory-pressure source closed; monitoring stops")
                        return
                    }
                } else if events & Int32(POLLHUP | POLLERR) != 0 {
                    logger.warning("The memory-pressure source hung up; monitoring stops")
                    return
                }
            }
        }
    }
}

/// Standard base64 (RFC 4648) decoding, for `$MEMORY_PRESSURE_WRITE`.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): values.append(62)
            case UInt8(ascii: "/"): values.append(63)
            case UInt8(ascii: "="), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
            default: return nil
            }
        }
        guard values.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        var index = 0
        while index + 1 < values.count {
            let chunk = values[index..<min(index + 4, values.count)]
            let a = chunk[chunk.startIndex], b = chunk[chunk.startIndex + 1]
            output.append(a << 2 | b >> 4)
            if chunk.count > 2 { output.append((b & 0x0F) << 4 | chunk[chunk.startIndex + 2] >> 2) }
            if chunk.count > 3 { output.append((chunk[chunk.startIndex + 2] & 0x03) << 6 | chunk[chunk.startIndex + 3]) }
            index += 4
        }
        return output
    }
}
