// The HTTP server: one accept loop and one coroutine per connection on the caller's
// io_context, the live event stream, and the server's lifecycle. What a request gets is
// api_routes.cpp's: the application layer the `board` command calls too, so the API and the
// CLI cannot disagree on a rule or a refusal.

#include "http/server_impl.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <array>
#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

namespace board::http {

// ---------------------------------------------------------------------------------------------
// Addresses

bool is_loopback_host(std::string_view host) {
    if (host == "localhost") return true;
    boost::system::error_code ec;
    const auto address = asio::ip::make_address(std::string{host}, ec);
    return !ec && address.is_loopback();
}

std::string page_host(const asio::ip::address& bound) {
    const auto named = [](const asio::ip::address& address) {
        return address.is_v6() ? "[" + address.to_string() + "]" : address.to_string();
    };
    if (!bound.is_unspecified()) return named(bound);
    std::optional<asio::ip::address> v4, v6;
    ifaddrs* interfaces = nullptr;
    if (::getifaddrs(&interfaces) == 0) {
        for (const ifaddrs* i = interfaces; i; i = i->ifa_next) {
            const unsigned up = IFF_UP | IFF_RUNNING;
            if (!i->ifa_addr || (i->ifa_flags & up) != up || (i->ifa_flags & IFF_LOOPBACK) != 0)
                continue;
            if (i->ifa_addr->sa_family == AF_INET && !v4) {
                sockaddr_in in{};
                std::memcpy(&in, i->ifa_addr, sizeof in);
                const asio::ip::address_v4 a{ntohl(in.sin_addr.s_addr)};
                if (!a.is_loopback() && !a.is_unspecified()) v4 = a;
            } else if (i->ifa_addr->sa_family == AF_INET6 && bound.is_v6() && !v6) {
                sockaddr_in6 in{};
                std::memcpy(&in, i->ifa_addr, sizeof in);
                asio::ip::address_v6::bytes_type bytes{};
                std::memcpy(bytes.data(), in.sin6_addr.s6_addr, bytes.size());
                const asio::ip::address_v6 a{bytes};
                // Global: a link-local address needs its interface named to be reached, and a
                // unique-local or site-local one only reaches so far.
                const bool unique_local = (bytes[0] & 0xfe) == 0xfc;
                if (!a.is_loopback() && !a.is_unspecified() && !a.is_link_local() &&
                    !a.is_site_local() && !a.is_multicast() && !a.is_v4_mapped() && !unique_local)
                    v6 = a;
            }
        }
        ::freeifaddrs(interfaces);
    }
    // `::` takes IPv4 connections too (Linux binds it dual-stack unless told otherwise).
    if (v6) return named(*v6);
    if (v4) return named(*v4);
    std::array<char, 256> name{};
    if (::gethostname(name.data(), name.size() - 1) == 0 && name[0] != '\0') return name.data();
    return "127.0.0.1";
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

std::string json_error(std::string_view message,
                       int exit_code,
                       const std::vector<std::string>& warnings) {
    json::object body{{"error", message}};
    if (exit_code != 0) body["exit_code"] = exit_code;
    if (!warnings.empty()) body["warnings"] = json::value_from(warnings);
    return json::serialize(body) + "\n";
}

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

bool string_member(const json::object& body,
                   std::string_view key,
                   std::string& out,
                   std::string& error,
                   bool required) {
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

// ---------------------------------------------------------------------------------------------

std::string HttpServer::Impl::start() {
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

void HttpServer::Impl::stop() {
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

asio::awaitable<void> HttpServer::Impl::accept_loop(std::shared_ptr<Impl> self) {
    while (!stopped) {
        auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
        if (ec) {
            if (stopped || ec == asio::error::operation_aborted) break;
            continue;  // e.g. EMFILE: the next accept may succeed
        }
        asio::co_spawn(io, session(self, std::move(socket)), asio::detached);
    }
}

asio::awaitable<void> HttpServer::Impl::rescan_loop(std::shared_ptr<Impl> /*alive*/) {
    while (!stopped) {
        rescan_timer.expires_after(options.rescan);
        co_await rescan_timer.async_wait(asio::as_tuple(asio::use_awaitable));
        if (stopped) break;
        for (const auto& id : feed.changed_since_last_read()) changed(id);
    }
}

void HttpServer::Impl::changed(std::string_view ticket) {
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

void HttpServer::Impl::open_stream(Subscriber& sub, const Request& req, const Target& target) {
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
                                   std::string{type_name(event.payload)} + "\",\"event\":" + line +
                                   "}";
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
            for (const auto* e : *missed) sub.pending += sse_frame(std::to_string(e->id), e->data);
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

asio::awaitable<void> HttpServer::Impl::session(std::shared_ptr<Impl> /*alive*/,
                                                tcp::socket socket) {
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
        auto [ec, n] =
            co_await bhttp::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
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
        // The two streams: every event (`/api/events`), one run's output (`.../runs/R/stream`).
        const bool get = target && req.method() == bhttp::verb::get;
        const auto& seg = target ? target->segments : std::vector<std::string>{};
        const bool events = get && seg.size() == 2 && seg[0] == "api" && seg[1] == "events";
        const bool run_output = get && seg.size() == 6 && seg[0] == "api" && seg[1] == "tickets" &&
                                seg[3] == "runs" && seg[5] == "stream";
        if (events || run_output) {
            if (auto refusal = check_access(req, *target)) {
                refusal->keep_alive(false);
                refusal->prepare_payload();
                co_await bhttp::async_write(stream, *refusal, asio::as_tuple(asio::use_awaitable));
                break;
            }
            stream.expires_never();
            if (events)
                co_await serve_events(stream, req, *target);
            else
                co_await serve_run_output(stream, seg[2], seg[4], req["Last-Event-ID"]);
            break;
        }
        const bool diff_read =
            get && seg.size() == 4 && seg[0] == "api" && seg[1] == "tickets" && seg[3] == "diff";
        Response res;
        if (!target)
            res = reply(bhttp::status::bad_request, json_error("malformed request target"));
        else if (diff_read)
            res = co_await diff(req, *target);
        else
            res = handle(req, *target);
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

using namespace boost::asio::experimental::awaitable_operators;

asio::awaitable<bool> HttpServer::Impl::write_in_time(tcp::socket& socket, std::string_view bytes) {
    asio::steady_timer deadline(socket.get_executor());
    while (!bytes.empty()) {
        // Each piece the client takes restarts the clock: a slow reader is served, a stopped
        // one is not waited for.
        deadline.expires_after(options.stream_write_timeout);
        auto write = socket.async_write_some(asio::buffer(bytes.data(), bytes.size()),
                                             asio::as_tuple(asio::use_awaitable));
        auto expire = deadline.async_wait(asio::as_tuple(asio::use_awaitable));
        auto result = co_await (std::move(write) || std::move(expire));
        if (result.index() != 0) co_return false;
        const auto [ec, n] = std::get<0>(result);
        if (ec) co_return false;
        bytes.remove_prefix(n);
    }
    co_return true;
}

asio::awaitable<void> HttpServer::Impl::serve_events(beast::tcp_stream& stream,
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
    auto send = [&]() -> asio::awaitable<void> {
        for (;;) {
            if (!out.empty()) {
                if (!co_await write_in_time(socket, out)) co_return;
                out.clear();
            }
            if (sub->closed || stopped) co_return;
            if (sub->pending.empty()) {
                sub->wake.expires_after(options.heartbeat);
                auto [ec] = co_await sub->wake.async_wait(asio::as_tuple(asio::use_awaitable));
                if (sub->closed || stopped) co_return;
                if (!ec && sub->pending.empty()) out = ":\n\n";  // heartbeat
            }
            out += std::move(sub->pending);
            sub->pending.clear();
        }
    };
    // A client sends nothing after its request: a read that ends is the peer gone, and its
    // connection slot is freed now, not at the next heartbeat's failed write.
    auto peer_gone = [&]() -> asio::awaitable<void> {
        std::array<char, 256> ignored{};
        for (;;) {
            auto [ec, n] = co_await socket.async_read_some(asio::buffer(ignored),
                                                           asio::as_tuple(asio::use_awaitable));
            if (ec) co_return;
        }
    };
    co_await (send() || peer_gone());
    sub->closed = true;
    subscribers.erase(registered);
}

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
    std::string url = "http://" + page_host(ep.address()) + ":" + std::to_string(ep.port()) + "/";
    if (!impl_->token.empty()) url += "?token=" + impl_->token;
    return url;
}

}  // namespace board::http
