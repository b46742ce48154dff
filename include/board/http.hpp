#pragma once
// The board over HTTP: a JSON API, a live event stream (Server-Sent Events) and the web page,
// served with Boost.Beast on an io_context the caller owns and runs (docs/http.md).
//
// Every request is answered by the application layer (board/app.hpp), the one the `board`
// command calls: writes act as `human:<name>` (never an agent: verdicts come only from
// people), and a refusal is returned in the same words. Status codes: 200/201 done, 404
// unknown ticket or question, 409 the rules refused (exit code 1), 422 invalid input (exit
// code 2 or a bad request body), 401 no or wrong token, 403 CSRF / Host checks, 413 body too
// large, 500 storage.
//
// Live events. Every event the server learns about gets a server-wide number, the SSE `id`:
// one increasing counter over all tickets, so "everything after N" is exact across tickets
// (a per-ticket `<ticket>:<seq>` cursor would need one cursor per ticket, which a browser's
// EventSource cannot send). The numbers start at the server's start time in microseconds,
// so a page that reconnects to a restarted server sends an id the new journal does not know;
// the server then answers with a `reset` event (reload everything) instead of a silent gap.
// The recent events are kept in an in-memory journal of bounded size (HttpOptions::journal);
// an id older than the journal also gets `reset`. Streams filtered with `?ticket=ID` use the
// per-ticket cursor `ID:seq` as their ids and resume from the ticket's log on disk, so they
// are exact whatever the journal kept.
//
// How the server learns of events: ticket_changed(id) (the daemon calls it from its inotify
// watch) reads what was appended to that ticket's log since the last read (by byte offset)
// and broadcasts it. A slow rescan (HttpOptions::rescan, stat of every log) does the same for
// changes nobody reported, so the component also works alone.
//
// Threading: everything runs on the caller's io_context (one thread). ticket_changed() and
// stop() may be called from any thread; they post to it. Requests call the application layer
// synchronously on that thread (a write costs one fdatasync; a list reads the kept board).

#include <board/app.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace board::http {

/// Where to listen. The default is loopback only.
struct HttpAddress {
    std::string host = "127.0.0.1";
    unsigned short port = 0;  ///< 0: any free port (see HttpServer::local_endpoint)
    friend bool operator==(const HttpAddress&, const HttpAddress&) = default;
};

/// `8080` (loopback), `0.0.0.0:8080`, `127.0.0.1:0`, `[::1]:8080`, `localhost:8080`.
/// nullopt with `error` set for anything else (a port above 65535, a host that is not an IP).
std::optional<HttpAddress> parse_http_address(std::string_view text, std::string& error);

/// 127.0.0.0/8, ::1 and `localhost`.
bool is_loopback_host(std::string_view host);

/// The host a printed link to a server bound to `bound` names: `bound` itself (an IPv6
/// address in brackets). An unspecified address (0.0.0.0, ::) is nothing a browser can open,
/// and the point of binding it is to be reached from elsewhere: the first IPv4 address of an
/// interface that is up, running and not loopback (for `::`, a global IPv6 address of one
/// first), else the machine's name, else 127.0.0.1.
std::string page_host(const boost::asio::ip::address& bound);

enum class TokenPolicy {
    /// A token for every write; on a loopback address reads go without it. An agent on the
    /// same machine can reach a loopback port, so only a holder of the token (kept where
    /// agents cannot read it) can act as a person.
    automatic,
    required,  ///< a token for every request, reads included
    none,      ///< never (tests); start() refuses a non-loopback address
};

struct HttpOptions {
    std::filesystem::path board;  ///< the board's root (holding board.yaml)
    /// The kept board to answer from, shared with the caller (the daemon); none: the server
    /// keeps its own.
    std::shared_ptr<app::LiveBoard> live_board;
    HttpAddress address;
    TokenPolicy token_policy = TokenPolicy::automatic;
    /// The token, if the caller has one. Else, when a token is needed, it is read from
    /// `<board>/.board/http-token`, or generated there (mode 0600) on first use.
    std::optional<std::string> token;
    /// Who acts when a request names no one (`X-Board-As: NAME` does): `human:<this>`.
    std::string default_human = "web";
    std::size_t max_body_bytes = 64 * 1024;        ///< larger request bodies get 413
    std::size_t journal = 65'536;                  ///< recent events kept for SSE resume
    std::size_t max_subscriber_backlog = 8 << 20;  ///< bytes queued for one slow stream: cut
    std::chrono::milliseconds rescan{2000};        ///< 0: no rescan (ticket_changed only)
    std::chrono::seconds heartbeat{15};            ///< SSE comment line, keeps proxies open
    std::size_t max_connections = 512;             ///< beyond it, new connections get 503
    /// A live stream whose client takes nothing for this long stopped reading: it is closed,
    /// and its connection slot freed.
    std::chrono::milliseconds stream_write_timeout{30'000};
    /// A run's live output stream starts with at most this much of what it already printed.
    std::uint64_t run_backlog = 64 * 1024;
    /// How often a live output stream looks for more output, and for the run's end.
    std::chrono::milliseconds run_poll{250};
};

class HttpServer {
public:
    HttpServer(boost::asio::io_context& io, HttpOptions options);
    /// Stops, directly: destroy it on the io_context's thread or once that thread has left
    /// run(). Handlers still queued keep the internals alive until they finish.
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    /// Resolves the token, binds, listens, notes the current end of every log (events
    /// before it are history, not news) and starts accepting. Returns an error sentence,
    /// or an empty string.
    std::string start();
    /// Closes the listener and every connection; pending handlers finish on the io_context.
    void stop();
    /// `id`'s log may have grown: broadcast what is new. Unknown or malformed ids are ignored.
    void ticket_changed(std::string_view ticket_id);

    boost::asio::ip::tcp::endpoint local_endpoint() const;
    /// The token in force ("" when none).
    const std::string& token() const;
    /// start() generated the token file just now: print it once.
    bool token_generated() const;
    /// The page's address with the token, for printing: `http://127.0.0.1:8080/?token=...`
    /// (the host is page_host()'s).
    std::string page_url() const;

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace board::http
