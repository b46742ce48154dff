#pragma once
// Shared by the HTTP tests: a temporary board, the server on its own thread, a Beast client.

#include <board/app.hpp>
#include <board/board_dir.hpp>
#include <board/event_log.hpp>
#include <board/http.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <utility>
#include <variant>
#include <vector>

namespace board::http_test {

struct TempBoard {
    std::filesystem::path dir;

    TempBoard() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "board-http-XXXXXX").string();
        dir = ::mkdtemp(pattern.data());
        REQUIRE(app::init_board(dir, "PROJ"));
    }

    ~TempBoard() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }

    std::string create(const std::string& title, const std::string& awaiting = {}) {
        app::CreateRequest request;
        request.title = title;
        request.awaiting = awaiting;
        auto made = app::Board{dir}.create(request, Actor{ActorKind::human, "alice"});
        REQUIRE(made);
        return made.value().ticket.id;
    }

    /// Appends as an agent (questions come only from agents).
    void append(const std::string& id, std::vector<Payload> payloads, Actor by = {}) {
        if (by.kind == ActorKind::system) by = Actor{ActorKind::agent, "research"};
        auto result = transact(*ticket_dir(dir, id), by, [&](const Ticket&) { return payloads; });
        REQUIRE(std::holds_alternative<Committed>(result));
    }
};

/// The server on its own thread, stopped and joined on scope exit.
struct Running {
    boost::asio::io_context io;
    http::HttpServer server;
    std::thread thread;

    explicit Running(http::HttpOptions options)
        : server(io, std::move(options)) {
        const auto error = server.start();
        INFO(error);
        REQUIRE(error.empty());
        thread = std::thread([this] { io.run(); });
    }

    ~Running() {
        server.stop();
        io.stop();
        thread.join();
    }

    unsigned short port() const { return server.local_endpoint().port(); }
};

/// The token of every test server; call() shows it on writes unless told otherwise.
inline const std::string test_token = "test-token-0123456789abcdef";

inline http::HttpOptions options_for(const TempBoard& board) {
    http::HttpOptions options;
    options.board = board.dir;
    options.token = test_token;
    options.rescan = std::chrono::milliseconds(0);
    return options;
}

struct Reply {
    int status = 0;
    std::string body;
    boost::beast::http::fields headers;

    boost::json::value json() const { return boost::json::parse(body); }
};

/// One request on a fresh connection. `headers` are added as given; Host defaults to the
/// loopback address and writes carry the CSRF header unless `raw` is set.
inline Reply call(unsigned short port,
                  boost::beast::http::verb verb,
                  const std::string& target,
                  const std::string& body = {},
                  std::map<std::string, std::string> headers = {},
                  bool raw = false) {
    boost::asio::io_context io;
    boost::beast::tcp_stream stream(io);
    stream.connect(
        boost::asio::ip::tcp::endpoint{boost::asio::ip::make_address("127.0.0.1"), port});
    boost::beast::http::request<boost::beast::http::string_body> req{verb, target, 11};
    req.set(boost::beast::http::field::host, "127.0.0.1:" + std::to_string(port));
    if (!raw && verb != boost::beast::http::verb::get) {
        req.set("X-Board-Request", "1");
        req.set(boost::beast::http::field::content_type, "application/json");
        req.set(boost::beast::http::field::authorization, "Bearer " + test_token);
    }
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    boost::beast::http::write(stream, req);
    boost::beast::flat_buffer buffer;
    boost::beast::http::response_parser<boost::beast::http::string_body> parser;
    parser.body_limit(64u << 20);
    boost::beast::error_code ec;
    boost::beast::http::read(stream, buffer, parser, ec);
    Reply out;
    if (ec) return out;
    auto res = parser.release();
    out.status = static_cast<int>(res.result_int());
    out.body = res.body();
    out.headers = res.base();
    return out;
}

inline Reply get(unsigned short port,
                 const std::string& target,
                 std::map<std::string, std::string> h = {}) {
    return call(port, boost::beast::http::verb::get, target, {}, std::move(h));
}

inline Reply post(unsigned short port,
                  const std::string& target,
                  const std::string& body,
                  std::map<std::string, std::string> h = {}) {
    return call(port, boost::beast::http::verb::post, target, body, std::move(h));
}

inline std::string error_of(const Reply& r) {
    return boost::json::value_to<std::string>(r.json().at("error"));
}

}  // namespace board::http_test
