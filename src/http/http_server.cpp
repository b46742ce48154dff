// The HTTP server: one accept loop and one coroutine per connection on the caller's
// io_context. Requests are answered by the application layer the `board` command calls too, so
// the API and the CLI cannot disagree on a rule or a refusal.

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

// ---------------------------------------------------------------------------------------------
// Addresses

bool is_loopback_host(std::string_view host) {
    if (host == "localhost") return true;
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(std::string{host}, ec);
    return !ec && address.is_loopback();
}

std::optional<HttpAddress> parse_http_address(std::string_view text, std::string& error) {
    HttpAddress out;
    std::string_view port = text;
    if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
        std::string_view host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
            host = host.substr(1, host.size() - 2);
        if (host.empty()) {
            error = "no host before the port in \"" + std::string{text} + "\"";
            return std::nullopt;
        }
        boost::system::error_code ec;
        if (host != "localhost") asio::ip::make_address(std::string{host}, ec);
        if (ec) {
            error = "\"" + std::string{host} + "\" is not an IP address (or localhost)";
            return std::nullopt;
        }
        out.host = host == "localhost" ? "127.0.0.1" : std::string{host};
    }
    unsigned value = 0;
    if (port.empty() || port.size() > 5) value = 70000;
    for (char c : port) {
        if (c < '0' || c > '9') value = 70000;
        if (value < 70000) value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value > 65535) {
        error = "\"" + std::string{port} + "\" is not a port (0 to 65535)";
        return std::nullopt;
    }
    out.port = static_cast<unsigned short>(value);
    return out;
}

// ---------------------------------------------------------------------------------------------
// The server

namespace {

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

std::string json_error(std::string_view message,
                       int exit_code = 0,
                       const std::vector<std::string>& warnings = {}) {
    json::object body{{"error", message}};
    if (exit_code != 0) body["exit_code"] = exit_code;
    if (!warnings.empty()) body["warnings"] = json::value_from(warnings);
    return json::serialize(body) + "\n";
}

/// A header value must not carry a line break.
std::string header_safe(std::string text) {
    std::replace_if(
        text.begin(), text.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');
    return text;
}

std::uint64_t micros_since_epoch() {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

/// A string member of a JSON body: absent gives `fallback`; another type is an error.
bool string_member(const json::object& body,
                   std::string_view key,
                   std::string& out,
                   std::string& error,
                   bool required = false) {
    const auto* value = body.if_contains(key);
    if (!value || value->is_null()) {
        if (required) error = "\"" + std::string{key} + "\" is required";
        return !required;
    }
    if (!value->is_string()) {
        error = "\"" + std::string{key} + "\" must be a string";
        return false;
    }
    out = std::string{value->as_string()};
    return true;
}

bool string_list_member(const json::object& body,
                        std::string_view key,
                        std::vector<std::string>& out,
                        std::string& error) {
    const auto* value = body.if_contains(key);
    if (!value || value->is_null()) return true;
    if (!value->is_array()) {
        error = "\"" + std::string{key} + "\" must be an array of strings";
        return false;
    }
    for (const auto& item : value->as_array()) {
        if (!item.is_string()) {
            error = "\"" + std::string{key} + "\" must be an array of strings";
            return false;
        }
        out.emplace_back(item.as_string());
    }
    return true;
}

}  // namespace

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

    std::string start() {
        loopback = is_loopback_host(options.address.host);
        const bool need_token = options.token_policy != TokenPolicy::none;
        reads_need_token = options.token_policy == TokenPolicy::required || !loopback;
        if (!loopback && options.token_policy == TokenPolicy::none)
            return "refusing to serve " + options.address.host +
                   " without a token: only a loopback address may go without one";
        if (need_token) {
            if (options.token) {
                if (options.token->size() < 16) return "the token must have at least 16 characters";
                token = *options.token;
            } else {
                std::string error;
                auto loaded = load_or_create_token(options.board, token_generated, error);
                if (!loaded) return error;
                token = std::move(*loaded);
            }
        }
        boost::system::error_code ec;
        const auto address = asio::ip::make_address(options.address.host, ec);
        if (ec) return "\"" + options.address.host + "\" is not an IP address";
        const tcp::endpoint at{address, options.address.port};
        acceptor.open(at.protocol(), ec);
        if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
        if (!ec) acceptor.bind(at, ec);
        if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
        if (ec) {
            acceptor.close();
            return "cannot listen on " + options.address.host + ":" +
                   std::to_string(options.address.port) + ": " + ec.message();
        }
        endpoint = acceptor.local_endpoint(ec);
        feed.prime();
        auto self = shared_from_this();
        asio::co_spawn(io, accept_loop(self), asio::detached);
        if (options.rescan.count() > 0) asio::co_spawn(io, rescan_loop(self), asio::detached);
        return {};
    }

    void stop() {
        if (stopped) return;
        stopped = true;
        boost::system::error_code ec;
        acceptor.close(ec);
        rescan_timer.cancel();
        for (auto& sub : subscribers) {
            sub->closed = true;
            sub->wake.cancel();
        }
        for (auto& [id, socket] : connections) {
            socket->shutdown(tcp::socket::shutdown_both, ec);
            socket->close(ec);
        }
    }

    asio::awaitable<void> accept_loop(std::shared_ptr<Impl> self) {
        while (!stopped) {
            auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
            if (ec) {
                if (stopped || ec == asio::error::operation_aborted) break;
                continue;  // e.g. EMFILE: the next accept may succeed
            }
            asio::co_spawn(io, session(self, std::move(socket)), asio::detached);
        }
    }

    // The parameter keeps the Impl alive while the coroutine runs (coroutine parameters live in
    // its frame).
    asio::awaitable<void> rescan_loop(std::shared_ptr<Impl> /*alive*/) {
        while (!stopped) {
            rescan_timer.expires_after(options.rescan);
            co_await rescan_timer.async_wait(asio::as_tuple(asio::use_awaitable));
            if (stopped) break;
            for (const auto& id : feed.changed_since_last_read()) changed(id);
        }
    }

    // -- live events -------------------------------------------------------------------------

    void changed(std::string_view ticket) {
        const auto events = feed.poll(ticket);
        if (events.empty()) return;
        board_cache.clear();  // a board-wide answer may have changed
        board->ticket_changed(ticket);
        for (auto& sub : subscribers) {
            if (sub->closed) continue;
            const std::size_t before = sub->pending.size();
            for (const auto& e : events) {
                if (sub->ticket.empty()) {
                    if (e.id <= sub->last_id) continue;
                    sub->pending += sse_frame(std::to_string(e.id), e.data);
                    sub->last_id = e.id;
                } else if (sub->ticket == e.ticket && e.seq > sub->last_seq) {
                    sub->pending += sse_frame(e.ticket + ":" + std::to_string(e.seq), e.data);
                    sub->last_seq = e.seq;
                }
            }
            if (sub->pending.size() > options.max_subscriber_backlog) {
                // Too slow to keep up: cut it. It reconnects with Last-Event-ID and resumes.
                sub->closed = true;
                sub->pending.clear();
            }
            if (sub->pending.size() != before || sub->closed) sub->wake.cancel();
        }
    }

    /// What a new stream sends first: the resume, or the id to resume from next time.
    void open_stream(Subscriber& sub, const Request& req, const Target& target) {
        sub.ticket = target.get("ticket");
        std::string last{req["Last-Event-ID"]};
        if (last.empty()) last = target.get("lastEventId");  // EventSource polyfills, curl
        const auto number = [](std::string_view s, std::uint64_t& out) {
            if (s.empty() || s.size() > 19) return false;
            out = 0;
            for (char c : s) {
                if (c < '0' || c > '9') return false;
                out = out * 10 + static_cast<std::uint64_t>(c - '0');
            }
            return true;
        };
        sub.pending = "retry: 1000\n\n";
        if (!sub.ticket.empty()) {
            // Per-ticket cursor `ID:seq`: resume from the log itself, exact whatever the
            // journal kept.
            std::uint64_t seq = 0;
            const auto colon = last.rfind(':');
            const bool resume = colon != std::string::npos && last.substr(0, colon) == sub.ticket &&
                                number(std::string_view{last}.substr(colon + 1), seq);
            changed(sub.ticket);  // what others have not seen yet goes to them first
            auto history = board->history(sub.ticket);
            const std::vector<Event> no_events;
            const auto& events = history ? history.value().events : no_events;
            std::int64_t last_seq = events.empty() ? 0 : events.back().seq;
            if (resume) {
                for (const auto& event : events) {
                    if (event.seq <= static_cast<std::int64_t>(seq)) continue;
                    std::string line = encode_event(event);
                    std::string data = "{\"ticket\":\"" + sub.ticket +
                                       "\",\"seq\":" + std::to_string(event.seq) + ",\"type\":\"" +
                                       std::string{type_name(event.payload)} +
                                       "\",\"event\":" + line + "}";
                    sub.pending += sse_frame(sub.ticket + ":" + std::to_string(event.seq), data);
                }
            }
            sub.last_seq = last_seq;
            sub.pending += sse_frame(
                sub.ticket + ":" + std::to_string(last_seq),
                "{\"ticket\":\"" + sub.ticket + "\",\"seq\":" + std::to_string(last_seq) + "}",
                "hello");
            return;
        }
        std::uint64_t from = 0;
        if (!last.empty()) {
            std::optional<std::vector<const FeedEvent*>> missed;
            if (number(last, from)) missed = feed.since(from);
            if (missed) {
                for (const auto* e : *missed)
                    sub.pending += sse_frame(std::to_string(e->id), e->data);
                sub.last_id = feed.last_id();
                return;
            }
            // Not exact: say so, and let the page reload its state.
            sub.pending += sse_frame(
                std::to_string(feed.last_id()),
                "{\"reason\":\"the server cannot replay from event " + header_safe(last) + "\"}",
                "reset");
            sub.last_id = feed.last_id();
            return;
        }
        sub.last_id = feed.last_id();
        sub.pending += sse_frame(
            std::to_string(sub.last_id), "{\"id\":" + std::to_string(sub.last_id) + "}", "hello");
    }

    // -- connections -------------------------------------------------------------------------

    asio::awaitable<void> session(std::shared_ptr<Impl> /*alive*/, tcp::socket socket) {
        const std::uint64_t conn = next_connection++;
        beast::tcp_stream stream(std::move(socket));
        connections[conn] = &stream.socket();

        struct Unregister {
            Impl& impl;
            std::uint64_t id;

            ~Unregister() { impl.connections.erase(id); }
        } unregister{*this, conn};

        if (connections.size() > options.max_connections) {
            Response res{bhttp::status::service_unavailable, 11};
            res.set(bhttp::field::content_type, "application/json");
            res.body() = json_error("too many connections");
            res.keep_alive(false);
            res.prepare_payload();
            stream.expires_after(std::chrono::seconds(5));
            co_await bhttp::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
            co_return;
        }

        beast::flat_buffer buffer;
        while (!stopped) {
            bhttp::request_parser<bhttp::string_body> parser;
            parser.body_limit(options.max_body_bytes);
            parser.header_limit(16 * 1024);
            stream.expires_after(std::chrono::seconds(60));
            auto [ec, n] = co_await bhttp::async_read(
                stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
            if (ec == bhttp::error::body_limit || ec == bhttp::error::header_limit) {
                const bool body = ec == bhttp::error::body_limit;
                Response res{body ? bhttp::status::payload_too_large
                                  : bhttp::status::request_header_fields_too_large,
                             11};
                res.set(bhttp::field::content_type, "application/json");
                res.body() = json_error(body ? "the request body is larger than " +
                                                   std::to_string(options.max_body_bytes) + " bytes"
                                             : "the request headers are too large");
                res.keep_alive(false);
                res.prepare_payload();
                co_await bhttp::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
                break;
            }
            if (ec) break;
            Request req = parser.release();
            const auto target = parse_target(req.target());
            if (target && req.method() == bhttp::verb::get && target->segments.size() == 2 &&
                target->segments[0] == "api" && target->segments[1] == "events") {
                if (auto refusal = check_access(req, *target)) {
                    refusal->keep_alive(false);
                    refusal->prepare_payload();
                    co_await bhttp::async_write(
                        stream, *refusal, asio::as_tuple(asio::use_awaitable));
                    break;
                }
                stream.expires_never();
                co_await serve_events(stream, req, *target);
                break;
            }
            Response res =
                target ? handle(req, *target)
                       : reply(bhttp::status::bad_request, json_error("malformed request target"));
            res.version(req.version());
            res.keep_alive(req.keep_alive() && !stopped);
            res.prepare_payload();
            auto [wec, wn] =
                co_await bhttp::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
            if (wec || !res.keep_alive()) break;
        }
        boost::system::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    }

    asio::awaitable<void> serve_events(beast::tcp_stream& stream,
                                       const Request& req,
                                       const Target& target) {
        if (const auto t = target.get("ticket"); !t.empty() && !is_valid_ticket_id(t)) {
            Response res =
                reply(bhttp::status::not_found, json_error("\"" + t + "\" is not a ticket id"));
            res.keep_alive(false);
            res.prepare_payload();
            co_await bhttp::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
            co_return;
        }
        auto sub = std::make_shared<Subscriber>(io.get_executor());
        open_stream(*sub, req, target);
        subscribers.push_back(sub);
        const auto registered = std::prev(subscribers.end());
        // Unchunked, no length: the body is the stream and ends when the connection does.
        std::string out =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
            "X-Accel-Buffering: no\r\nConnection: close\r\n\r\n";
        out += std::move(sub->pending);
        sub->pending.clear();
        auto& socket = stream.socket();
        for (;;) {
            if (!out.empty()) {
                auto [ec, n] = co_await asio::async_write(
                    socket, asio::buffer(out), asio::as_tuple(asio::use_awaitable));
                if (ec) break;
                out.clear();
            }
            if (sub->closed || stopped) break;
            if (sub->pending.empty()) {
                sub->wake.expires_after(options.heartbeat);
                auto [ec] = co_await sub->wake.async_wait(asio::as_tuple(asio::use_awaitable));
                if (sub->closed || stopped) break;
                if (!ec && sub->pending.empty()) out = ":\n\n";  // heartbeat
            }
            out += std::move(sub->pending);
            sub->pending.clear();
        }
        sub->closed = true;
        subscribers.erase(registered);
    }

    // -- requests ----------------------------------------------------------------------------

    static Response reply(bhttp::status status,
                          std::string body,
                          std::string_view type = "application/json") {
        Response res{status, 11};
        res.set(bhttp::field::content_type, type);
        res.set(bhttp::field::cache_control, "no-store");
        res.set("X-Content-Type-Options", "nosniff");
        res.body() = std::move(body);
        return res;
    }

    /// The Host check, the token and, on writes, the CSRF rule. nullopt: go ahead.
    std::optional<Response> check_access(const Request& req, const Target& target) {
        const std::string host{req[bhttp::field::host]};
        if (loopback && !host_is_loopback(host))
            return reply(bhttp::status::forbidden,
                         json_error("the Host header must name this machine (localhost or "
                                    "127.0.0.1) on a loopback server"));
        const bool write = req.method() != bhttp::verb::get && req.method() != bhttp::verb::head;
        if (!token.empty() && (write || reads_need_token)) {
            const auto presented =
                presented_token(req[bhttp::field::authorization], req[bhttp::field::cookie]);
            if (presented.empty() || !same_token(presented, token)) {
                auto res = reply(bhttp::status::unauthorized,
                                 json_error("a token is required: `Authorization: Bearer "
                                            "<token>` (see .board/http-token)"));
                res.set(bhttp::field::www_authenticate, "Bearer");
                return res;
            }
        }
        (void)target;
        if (write) {
            // A cross-site form or fetch cannot set a custom header without a CORS preflight,
            // which this server never grants; an Origin, when sent, must be this server.
            if (req["X-Board-Request"].empty())
                return reply(bhttp::status::forbidden,
                             json_error("writes need the header X-Board-Request: 1 (CSRF guard)"));
            const std::string origin{req[bhttp::field::origin]};
            if (!origin.empty() && origin != "http://" + host)
                return reply(
                    bhttp::status::forbidden,
                    json_error("cross-origin write refused (Origin " + header_safe(origin) + ")"));
        }
        return std::nullopt;
    }

    Response handle(const Request& req, const Target& target) {
        const auto& seg = target.segments;
        if (seg.empty() || seg[0] != "api") return serve_page(req, target);
        if (auto refusal = check_access(req, target)) return std::move(*refusal);

        std::string as = options.default_human;
        if (const auto named = req["X-Board-As"]; !named.empty()) as = std::string{named};
        if (!app::is_valid_person_name(as))
            return reply(bhttp::status::unprocessable_entity,
                         json_error("X-Board-As: \"" + header_safe(as) +
                                    "\" is not a person's name (printable, no spaces or ':')"));
        const Actor by{ActorKind::human, as};  // the API never acts as an agent

        const bool get = req.method() == bhttp::verb::get;
        const bool post = req.method() == bhttp::verb::post;
        const std::size_t n = seg.size();
        const bool board_wide =
            get && n == 2 && (seg[1] == "tickets" || seg[1] == "inbox" || seg[1] == "questions");
        if (board_wide) {
            const std::string key{req.target()};
            if (const auto hit = board_cache.find(key); hit != board_cache.end())
                return reply(bhttp::status::ok, hit->second);
            Response res = seg[1] == "tickets" ? list(target)
                           : seg[1] == "inbox"
                               ? answer(board->inbox())
                               : answer(board->questions(target.get("pending") == "1" ||
                                                         target.get("pending") == "true"));
            if (res.result() == bhttp::status::ok && res["Board-Warning"].empty()) {
                if (board_cache.size() >= 64) board_cache.clear();
                board_cache.emplace(key, res.body());
            }
            return res;
        }
        if (n == 2 && seg[1] == "tickets" && post) return create(req, by);
        if (n == 2 && seg[1] == "whoami" && get)
            return reply(bhttp::status::ok,
                         json::serialize(json::object{{"as", "human:" + as},
                                                      {"last_event_id", feed.last_id()}}) +
                             "\n");
        if (n >= 3 && seg[1] == "tickets") {
            const std::string& id = seg[2];
            if (!is_valid_ticket_id(id))
                return reply(bhttp::status::not_found,
                             json_error("\"" + id + "\" is not a ticket id (expected PREFIX-N)"));
            const auto dir = *ticket_dir(options.board, id);
            std::error_code ec;
            if (!fs::exists(dir / std::string{log_file_name}, ec))
                return reply(bhttp::status::not_found,
                             json_error("no ticket " + id + " on this board"));
            if (n == 3 && get) return show(id, std::nullopt);
            if (n == 4 && get && seg[3] == "events") return events(id, target);
            if (n == 4 && get && seg[3] == "state") {
                const auto at = target.get("seq");
                if (at.empty() || at.size() > 12 ||
                    !std::all_of(at.begin(), at.end(), [](char c) { return c >= '0' && c <= '9'; }))
                    return reply(bhttp::status::unprocessable_entity,
                                 json_error("?seq=N is required (a non-negative integer)"));
                return show(id, std::stoll(at));
            }
            if (n == 4 && get && seg[3] == "artifacts") return artifacts(id);
            if (n == 5 && get && seg[3] == "artifacts") return artifact(dir, seg[4]);
            if (n == 4 && post) return write(req, id, seg[3], by);
        }
        if (n == 4 && seg[1] == "questions" && seg[3] == "answer" && post) {
            const std::string& qid = seg[2];
            const auto dot = qid.rfind('.');
            if (dot != std::string::npos && is_valid_ticket_id(qid.substr(0, dot))) {
                std::error_code ec;
                if (!fs::exists(
                        *ticket_dir(options.board, qid.substr(0, dot)) / std::string{log_file_name},
                        ec))
                    return reply(bhttp::status::not_found,
                                 json_error("no ticket " + qid.substr(0, dot) + " on this board"));
            }
            json::object body;
            if (auto bad = parse_body(req, body)) return std::move(*bad);
            std::string value, note, error;
            if (const auto* v = body.if_contains("value"); v && v->is_bool())
                value = v->as_bool() ? "true" : "false";
            else if (v && (v->is_int64() || v->is_uint64() || v->is_double()))
                value = json::serialize(*v);
            else if (!string_member(body, "value", value, error, true))
                return reply(bhttp::status::unprocessable_entity, json_error(error));
            if (!string_member(body, "note", note, error))
                return reply(bhttp::status::unprocessable_entity, json_error(error));
            return written(board->answer(qid, value, note, by));
        }
        const bool known = (n == 2 && (seg[1] == "tickets" || seg[1] == "inbox" ||
                                       seg[1] == "questions" || seg[1] == "whoami"));
        if (known)
            return reply(bhttp::status::method_not_allowed, json_error("method not allowed"));
        return reply(bhttp::status::not_found, json_error("no such endpoint"));
    }

    Response serve_page(const Request& req, const Target& target) {
        if (req.method() != bhttp::verb::get && req.method() != bhttp::verb::head)
            return reply(bhttp::status::method_not_allowed, json_error("method not allowed"));
        std::string path = "/";
        for (const auto& s : target.segments) path += (path.size() > 1 ? "/" : "") + s;
        if (path == "/" && target.has("token")) {
            // The printed link carries the token once; trade it for a cookie and drop it
            // from the address bar (and from the browser's history).
            if (token.empty() || !same_token(target.get("token"), token))
                return reply(bhttp::status::unauthorized, json_error("wrong token"));
            auto res = reply(bhttp::status::see_other, {});
            res.set(bhttp::field::location, "/");
            res.set(bhttp::field::set_cookie,
                    "board_token=" + token + "; Path=/; HttpOnly; SameSite=Strict");
            return res;
        }
        const auto asset = web_asset(path);
        if (!asset)
            return reply(bhttp::status::not_found, json_error("not found"), "application/json");
        auto res = reply(bhttp::status::ok, std::string{asset->body}, asset->content_type);
        res.set("Content-Security-Policy",
                "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors "
                "'none'; base-uri 'none'");
        res.set("Referrer-Policy", "no-referrer");
        res.set(bhttp::field::cache_control, "no-cache");
        return res;
    }

    static Response refused(const app::Refusal& refusal) {
        using Kind = app::Refusal::Kind;
        const auto status = refusal.kind == Kind::invalid     ? bhttp::status::unprocessable_entity
                            : refusal.kind == Kind::not_found ? bhttp::status::not_found
                            : refusal.kind == Kind::refused   ? bhttp::status::conflict
                                                            : bhttp::status::internal_server_error;
        return reply(
            status, json_error(refusal.message, app::exit_code_of(refusal.kind), refusal.warnings));
    }

    /// A read's JSON, or its refusal; warnings (tickets left out) go in Board-Warning headers.
    template <class T>
    static Response answer(const app::Result<T>& result) {
        if (!result) return refused(result.error());
        auto res = reply(bhttp::status::ok, app::to_json(result.value()));
        for (const auto& w : result.value().warnings) res.insert("Board-Warning", header_safe(w));
        return res;
    }

    /// A write's ticket, or its refusal. The write is broadcast now, not at the next rescan.
    Response written(const app::Result<app::Written>& result,
                     bhttp::status ok = bhttp::status::ok) {
        if (!result) return refused(result.error());
        changed(result.value().ticket.id);
        auto res = reply(ok, app::to_json(result.value()));
        for (const auto& w : result.value().warnings) res.insert("Board-Warning", header_safe(w));
        return res;
    }

    std::optional<Response> parse_body(const Request& req, json::object& body) {
        if (req.body().empty()) return std::nullopt;
        boost::system::error_code ec;
        auto value = json::parse(req.body(), ec);
        if (ec || !value.is_object())
            return reply(bhttp::status::unprocessable_entity,
                         json_error("the request body must be a JSON object"));
        body = std::move(value.as_object());
        return std::nullopt;
    }

    Response list(const Target& target) {
        ListFilter filter;
        if (target.has("status")) {
            auto statuses = app::parse_status_list(target.get("status"));
            if (!statuses)
                return reply(bhttp::status::unprocessable_entity,
                             json_error("status: \"" + target.get("status") +
                                        "\" is not a list of statuses"));
            filter.statuses = std::move(*statuses);
        }
        if (target.has("awaiting")) {
            auto types = app::parse_awaiting_list(target.get("awaiting"));
            if (!types)
                return reply(bhttp::status::unprocessable_entity,
                             json_error("awaiting: \"" + target.get("awaiting") +
                                        "\" is not a list of awaiting types"));
            filter.awaiting_any = types->empty();
            filter.awaiting = std::move(*types);
        }
        filter.parent = target.get("parent");
        const auto flag = [&](const char* key) {
            const auto v = target.get(key);
            return target.has(key) && v != "0" && v != "false";
        };
        filter.standalone = flag("standalone");
        filter.orphan = flag("orphan");
        filter.all = flag("all");
        filter.labels = app::split_list(target.get("label"));
        return answer(board->list(filter));
    }

    Response create(const Request& req, const Actor& by) {
        json::object body;
        if (auto bad = parse_body(req, body)) return std::move(*bad);
        app::CreateRequest request;
        std::string error;
        bool ok = string_member(body, "title", request.title, error, true) &&
                  string_member(body, "description", request.description, error) &&
                  string_member(body, "type", request.type, error) &&
                  string_member(body, "parent", request.parent, error) &&
                  string_member(body, "requires", request.requires_, error) &&
                  string_member(body, "awaiting", request.awaiting, error) &&
                  string_list_member(body, "labels", request.labels, error) &&
                  string_list_member(body, "blocked_by", request.blocked_by, error);
        if (ok) {
            if (const auto* p = body.if_contains("priority"); p && !p->is_null()) {
                if (!p->is_int64() || p->as_int64() < 0 || p->as_int64() > 4) {
                    error = "\"priority\" must be an integer from 0 to 4";
                    ok = false;
                } else {
                    request.priority = static_cast<int>(p->as_int64());
                }
            }
        }
        if (!ok) return reply(bhttp::status::unprocessable_entity, json_error(error));
        return written(board->create(request, by), bhttp::status::created);
    }

    Response write(const Request& req,
                   const std::string& id,
                   const std::string& verb,
                   const Actor& by) {
        json::object body;
        if (auto bad = parse_body(req, body)) return std::move(*bad);
        std::string text, error;
        const auto field = [&](const char* key, bool required) {
            return string_member(body, key, text, error, required);
        };
        const auto invalid = [&] {
            return reply(bhttp::status::unprocessable_entity, json_error(error));
        };
        if (verb == "approve") {
            if (!field("note", false)) return invalid();
            return written(board->approve(id, text, by));
        }
        if (verb == "reject") {
            if (!field("feedback", true)) return invalid();
            return written(board->reject(id, text, by));
        }
        if (verb == "note") {
            if (!field("text", true)) return invalid();
            return written(board->note(id, text, app::NoteFrom::human, by));
        }
        if (verb == "cancel") {
            if (!field("reason", false)) return invalid();
            return written(board->cancel(id, text, by));
        }
        return reply(bhttp::status::not_found, json_error("no such action: " + verb));
    }

    /// The ticket, or with `until` its state after that seq (the replay slider).
    Response show(const std::string& id, std::optional<std::int64_t> until) {
        auto view = board->show(id, until);
        if (!view) return refused(view.error());
        return reply(bhttp::status::ok,
                     until ? app::replay_step_json(view.value()) : app::to_json(view.value()));
    }

    Response events(const std::string& id, const Target& target) {
        std::int64_t after = 0;
        if (const auto a = target.get("after"); !a.empty()) {
            if (a.size() > 12 ||
                !std::all_of(a.begin(), a.end(), [](char c) { return c >= '0' && c <= '9'; }))
                return reply(bhttp::status::unprocessable_entity,
                             json_error("?after=N must be a non-negative integer"));
            after = std::stoll(a);
        }
        std::string out = "[";
        bool first = true;
        std::string error;
        auto report = read_log(*ticket_dir(options.board, id) / std::string{log_file_name},
                               [&](const Event& e) {
                                   if (e.seq <= after) return;
                                   if (!first) out += ',';
                                   first = false;
                                   append_event(out, e);
                                   while (!out.empty() && out.back() == '\n') out.pop_back();
                               });
        if (auto* failed = std::get_if<LogError>(&report))
            return reply(failed->kind == LogError::Kind::not_found
                             ? bhttp::status::not_found
                             : bhttp::status::internal_server_error,
                         json_error(failed->message, 3));
        out += "]\n";
        return reply(bhttp::status::ok, std::move(out));
    }

    Response artifacts(const std::string& id) {
        auto loaded = load_ticket(*ticket_dir(options.board, id));
        if (auto* failed = std::get_if<LogError>(&loaded))
            return reply(bhttp::status::internal_server_error, json_error(failed->message, 3));
        const auto ticket = ticket_to_json(std::get<Loaded>(loaded).ticket);
        return reply(bhttp::status::ok, json::serialize(ticket.at("artifacts")) + "\n");
    }

    Response artifact(const fs::path& dir, const std::string& name) {
        bool missing = false;
        std::string error;
        auto text = read_confined(dir, name, 16u << 20, missing, error);
        if (!text)
            return reply(missing ? bhttp::status::not_found : bhttp::status::forbidden,
                         json_error(error));
        auto res = reply(bhttp::status::ok, std::move(*text), "text/plain; charset=utf-8");
        // Served as text, never as a page: even opened directly it runs nothing.
        res.set("Content-Security-Policy", "default-src 'none'; sandbox");
        return res;
    }
};

HttpServer::HttpServer(asio::io_context& io, HttpOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(options))) {}

HttpServer::~HttpServer() {
    impl_->stop();
}

std::string HttpServer::start() {
    return impl_->start();
}

void HttpServer::stop() {
    asio::post(impl_->io, [impl = impl_] { impl->stop(); });
}

void HttpServer::ticket_changed(std::string_view ticket_id) {
    asio::post(impl_->io, [impl = impl_, id = std::string{ticket_id}] {
        if (!impl->stopped) impl->changed(id);
    });
}

tcp::endpoint HttpServer::local_endpoint() const {
    return impl_->endpoint;
}

const std::string& HttpServer::token() const {
    return impl_->token;
}

bool HttpServer::token_generated() const {
    return impl_->token_generated;
}

std::string HttpServer::page_url() const {
    const auto& ep = impl_->endpoint;
    std::string host = ep.address().to_string();
    if (ep.address().is_v6()) host = "[" + host + "]";
    if (ep.address().is_unspecified()) host = "127.0.0.1";
    std::string url = "http://" + host + ":" + std::to_string(ep.port()) + "/";
    if (!impl_->token.empty()) url += "?token=" + impl_->token;
    return url;
}

}  // namespace board::http
