"""Hostile and broken TLS peers for tls.sh, each on a loopback port it prints on its first line.

  tls_peers.py no-close-notify CERT KEY   answers one complete HTTP response per connection, then
                                          closes the socket without TLS's close_notify
  tls_peers.py stall                      accepts TCP connections and never says a byte
"""
import os, socket, ssl, sys

def listener():
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    print(server.getsockname()[1], flush=True)
    return server

def no_close_notify(cert, key):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = listener()
    while True:
        connection, _ = server.accept()
        tls = None
        try:
            tls = context.wrap_socket(connection, server_side=True)
            tls.recv(65536)
            body = b"complete\n"
            tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            # The TCP connection ends (FIN) without TLS's close_notify, as many servers end it.
            raw = socket.socket(fileno=os.dup(tls.fileno()))
            raw.shutdown(socket.SHUT_RDWR)
            raw.close()
        except (OSError, ssl.SSLError):
            pass
        finally:
            (tls or connection).close()

def stall():
    server = listener()
    held = []
    while True:
        connection, _ = server.accept()
        held.append(connection)  # never read, never answered, never closed

if __name__ == "__main__":
    if sys.argv[1] == "no-close-notify":
        no_close_notify(sys.argv[2], sys.argv[3])
    else:
        stall()
