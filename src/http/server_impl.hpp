#pragma once
// The inside of HttpServer (include/board/http.hpp), shared by its two halves: http_server.cpp
// (listening, connections, live events) and api_routes.cpp (the JSON API and the page).

#include "http/event_feed.hpp"
#include "http/security.hpp"
#include "http/web_assets.hpp"

#include <board/app.hpp>
#include <board/board_dir.hpp>
#include <board/catalog.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>
#include <board/http.hpp>
#include <board/reduce.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <chrono>
#include <list>
#include <set>
#include <unordered_map>

namespace board::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;
namespace fs = std::filesystem;
using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;

/// One SSE stream: what is queued for it and how to wake its writer.
struct Subscriber {
    explicit Subscriber(asio::any_io_executor ex)
        : wake(ex, asio::steady_timer::time_point::max()) {}

    std::string pending;
    asio::steady_timer wake;
    std::string ticket;         ///< empty: every ticket
    std::uint64_t last_id = 0;  ///< unfiltered: the last server id sent
    std::int64_t last_seq = 0;  ///< filtered: the last seq of `ticket` sent
    bool closed = false;
};

/// `{"error": message, "exit_code": ..., "warnings": [...]}` and a newline.
std::string json_error(std::string_view message,
                       int exit_code = 0,
                       const std::vector<std::string>& warnings = {});

/// A header value must not carry a line break.
std::string header_safe(std::string text);

std::uint64_t micros_since_epoch();

/// A string member of a JSON body: absent gives `fallback`; another type is an error.
bool string_member(const json::object& body,
                   std::string_view key,
                   std::string& out,
                   std::string& error,
                   bool required = false);

/// A list of strings in a JSON body: absent leaves `out` empty; another type is an error.
bool string_list_member(const json::object& body,
                        std::string_view key,
                        std::vector<std::string>& out,
                        std::string& error);

struct HttpServer::Impl : std::enable_shared_from_this<Impl> {
    Impl(asio::io_context& io_, HttpOptions options_)
        : io(io_)
        , options(std::move(options_))
        , acceptor(io_)
        , rescan_timer(io_)
        , feed(options.board, micros_since_epoch(), options.journal)
        , board(options.live_board ? options.live_board
                                   : std::make_shared<app::LiveBoard>(options.board)) {}

    asio::io_context& io;
    HttpOptions options;
    tcp::acceptor acceptor;
    asio::steady_timer rescan_timer;
    EventFeed feed;
    std::string token;
    bool token_generated = false;
    bool loopback = true;
    bool reads_need_token = true;  ///< else only writes must show the token
    bool stopped = false;
    tcp::endpoint endpoint;
    std::list<std::shared_ptr<Subscriber>> subscribers;
    std::unordered_map<std::uint64_t, tcp::socket*> connections;
    std::uint64_t next_connection = 0;
    /// Board-wide answers (list, inbox, questions) by request target, until the feed sees an
    /// append: a page refetches them after every event, and rendering a big board is most of
    /// an answer. Staleness is bounded by what the feed knows: an API write or
    /// ticket_changed() at once, other writers within one rescan.
    std::unordered_map<std::string, std::string> board_cache;
    /// The board: shared with the daemon when it runs the server, else this server's own.
    std::shared_ptr<app::LiveBoard> board;

    // -- lifecycle ---------------------------------------------------------------------------

    std::string start();

    void stop();

    asio::awaitable<void> accept_loop(std::shared_ptr<Impl> self);

    // The parameter keeps the Impl alive while the coroutine runs (coroutine parameters live in
    // its frame).
    asio::awaitable<void> rescan_loop(std::shared_ptr<Impl> /*alive*/);

    // -- live events -------------------------------------------------------------------------

    void changed(std::string_view ticket);

    /// What a new stream sends first: the resume, or the id to resume from next time.
    void open_stream(Subscriber& sub, const Request& req, const Target& target);

    // -- connections -------------------------------------------------------------------------

    asio::awaitable<void> session(std::shared_ptr<Impl> /*alive*/, tcp::socket socket);

    asio::awaitable<void> serve_events(beast::tcp_stream& stream,
                                       const Request& req,
                                       const Target& target);

    /// Writes all of `bytes` to a live stream; false when it failed, or when the client took
    /// none of it for `stream_write_timeout` (it stopped reading; the stream is then to be
    /// closed, else it would hold its connection slot for ever).
    asio::awaitable<bool> write_in_time(tcp::socket& socket, std::string_view bytes);

    // -- requests ----------------------------------------------------------------------------

    static Response reply(bhttp::status status,
                          std::string body,
                          std::string_view type = "application/json");

    /// The Host check, the token and, on writes, the CSRF rule. nullopt: go ahead.
    std::optional<Response> check_access(const Request& req, const Target& target);

    Response handle(const Request& req, const Target& target);

    Response serve_page(const Request& req, const Target& target);

    static Response refused(const app::Refusal& refusal);

    /// A read's JSON, or its refusal; warnings (tickets left out) go in Board-Warning headers.
    template <class T>
    static Response answer(const app::Result<T>& result) {
        if (!result) return refused(result.error());
        auto res = reply(bhttp::status::ok, app::to_json(result.value()));
        for (const auto& w : result.value().warnings) res.insert("Board-Warning", header_safe(w));
        return res;
    }

    /// A write's ticket, or its refusal. The write is broadcast now, not at the next rescan.
    Response written(const app::Result<app::Written>& result, bhttp::status ok = bhttp::status::ok);

    std::optional<Response> parse_body(const Request& req, json::object& body);

    Response list(const Target& target);
    /// `GET /api/stats?since=`: `board stats --json` (the last week by default).
    Response stats(const Target& target);

    Response create(const Request& req, const Actor& by);

    Response write(const Request& req,
                   const std::string& id,
                   const std::string& verb,
                   const Actor& by);

    /// The ticket, or with `until` its state after that seq (the replay slider); `html` adds
    /// its description rendered (`description_html`).
    Response show(const std::string& id, std::optional<std::int64_t> until, bool html = false);

    Response events(const std::string& id, const Target& target);

    Response artifacts(const std::string& id);

    /// The artifact file as text, or with `html` rendered from Markdown to an HTML fragment.
    Response artifact(const fs::path& dir, const std::string& name, bool html);

    // -- runs and the diff (run_routes.cpp) --------------------------------------------------

    /// The run `run` of ticket `id`, or nullopt with `refusal` set (404 for an unknown run).
    std::optional<app::RunView> find_run(const std::string& id,
                                         const std::string& run,
                                         Response& refusal);

    /// The run's prompt, or the tail (`?tail=BYTES`) of what it printed, as text.
    Response run_file(const std::string& id,
                      const std::string& run,
                      bool prompt,
                      const Target& target);

    /// `GET /api/tickets/<ID>/diff`: `git diff BASE...board/<ID>` as text (`?stat=1`: the
    /// summary). git can take long on a big branch, so it runs on `slow_reads`, and the loop
    /// (the daemon's agents, every other request) never waits for it.
    asio::awaitable<Response> diff(const Request& req, const Target& target);

    /// What the run prints, as Server-Sent Events: `output` events (`{"text"}`) from a bounded
    /// backlog on, then one `end` (the run as `board runs --json` gives it) when it is over.
    /// Each event's id is the byte offset in the run's log its text reaches; a reconnect that
    /// sends one back (`last_event_id`, at most the log's size) resumes there instead.
    asio::awaitable<void> serve_run_output(beast::tcp_stream& stream,
                                           const std::string& id,
                                           const std::string& run,
                                           std::string_view last_event_id);

    /// Last, so it is joined first: a read still running only holds copies of what it reads.
    asio::thread_pool slow_reads{1};
};

}  // namespace board::http
