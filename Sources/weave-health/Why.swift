import WeaveReaders
import WeaveSupport

/// `weave-health why APP/DEPENDENCY`: prints the daemon's `/why` for one dependency of one
/// application: its last slow chain and its startup chain, each run with its total and self time.
/// Exit status 0 when the daemon knows either, 1 when it knows neither or cannot be asked.
enum Why {
    static func run(_ subject: (app: String, dependency: String), _ options: ProbeOptions, target: ProbeTarget) -> Int32 {
        let http = HTTPProbe(target: target, connectTimeout: options.connectTimeout, deadline: ContinuousClock.now + options.timeout)
        let reply: HTTPReply
        do {
            reply = try http.get("/why?app=\(percentEncoded(subject.app))&dependency=\(percentEncoded(subject.dependency))",
                                 accept: "text/plain")
        } catch {
            write("weave-health: \(error) (\(target))\n", to: 2)
            return 1
        }
        // What the daemon wrote is shown as text, one line at a time, whatever it holds.
        let text = String(decoding: reply.body.prefix(1 << 20), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0).logSafe }.joined(separator: "\n")
        guard reply.status == 200 else {
            write("weave-health: HTTP \(reply.status) from /why: \(text)\(text.hasSuffix("\n") ? "" : "\n")", to: 2)
            return 1
        }
        write(text, to: 1)
        return 0
    }

    /// `text` for a query value: every byte but the unreserved ones as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out += "%"
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 15)])
            }
        }
        return out
    }
}
