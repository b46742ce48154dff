// The HTTP component over real loopback sockets: a Beast client (synchronous, on the test's
// thread) against the server on its own io_context thread. Every endpoint with success and
// refusal, the security rules, and the live stream (50 subscribers, 5,000 events, resume).

#include "http/event_feed.hpp"
#include "http/security.hpp"

#include <board/app.hpp>
#include <board/board_dir.hpp>
#include <board/event_log.hpp>
#include <board/http.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace json = boost::json;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;
using namespace board;
using namespace board::http;

namespace {

struct TempBoard {
    fs::path dir;

    TempBoard() {
        std::string pattern = (fs::temp_directory_path() / "board-http-XXXXXX").string();
        dir = ::mkdtemp(pattern.data());
        REQUIRE(app::init_board(dir, "PROJ"));
    }

    ~TempBoard() {
        std::error_code ec;
        fs::remove_all(dir, ec);
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
    asio::io_context io;
    HttpServer server;
    std::thread thread;

    explicit Running(HttpOptions options)
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
const std::string test_token = "test-token-0123456789abcdef";

HttpOptions options_for(const TempBoard& board) {
    HttpOptions options;
    options.board = board.dir;
    options.token = test_token;
    options.rescan = std::chrono::milliseconds(0);
    return options;
}

struct Reply {
    int status = 0;
    std::string body;
    bhttp::fields headers;

    json::value json() const { return json::parse(body); }
};

/// One request on a fresh connection. `headers` are added as given; Host defaults to the
/// loopback address and writes carry the CSRF header unless `raw` is set.
Reply call(unsigned short port,
           bhttp::verb verb,
           const std::string& target,
           const std::string& body = {},
           std::map<std::string, std::string> headers = {},
           bool raw = false) {
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(tcp::endpoint{asio::ip::make_address("127.0.0.1"), port});
    bhttp::request<bhttp::string_body> req{verb, target, 11};
    req.set(bhttp::field::host, "127.0.0.1:" + std::to_string(port));
    if (!raw && verb != bhttp::verb::get) {
        req.set("X-Board-Request", "1");
        req.set(bhttp::field::content_type, "application/json");
        req.set(bhttp::field::authorization, "Bearer " + test_token);
    }
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    bhttp::write(stream, req);
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(64u << 20);
    beast::error_code ec;
    bhttp::read(stream, buffer, parser, ec);
    Reply out;
    if (ec) return out;
    auto res = parser.release();
    out.status = static_cast<int>(res.result_int());
    out.body = res.body();
    out.headers = res.base();
    return out;
}

Reply get(unsigned short port,
          const std::string& target,
          std::map<std::string, std::string> h = {}) {
    return call(port, bhttp::verb::get, target, {}, std::move(h));
}

Reply post(unsigned short port,
           const std::string& target,
           const std::string& body,
           std::map<std::string, std::string> h = {}) {
    return call(port, bhttp::verb::post, target, body, std::move(h));
}

std::string text(const json::value& v) {
    return v.is_string() ? std::string{v.as_string()} : json::serialize(v);
}

std::string error_of(const Reply& r) {
    return json::value_to<std::string>(r.json().at("error"));
}

// --- an SSE client -------------------------------------------------------------------------

struct Frame {
    std::string event, id, data;
};

/// Reads frames from an open event stream until `done(frames)` or the connection ends.
struct SseClient {
    std::vector<Frame> frames;
    bool connected = false;
    bool counted = false;
    std::string error;

    asio::awaitable<void> run(unsigned short port,
                              std::string target,
                              std::string last_event_id,
                              std::function<bool(const std::vector<Frame>&)> done) {
        auto ex = co_await asio::this_coro::executor;
        tcp::socket socket(ex);
        auto [cec] =
            co_await socket.async_connect(tcp::endpoint{asio::ip::make_address("127.0.0.1"), port},
                                          asio::as_tuple(asio::use_awaitable));
        if (cec) {
            error = cec.message();
            co_return;
        }
        std::string request = "GET " + target +
                              " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                              "\r\nAccept: text/event-stream\r\n";
        if (!last_event_id.empty()) request += "Last-Event-ID: " + last_event_id + "\r\n";
        request += "\r\n";
        auto [wec, wn] = co_await asio::async_write(
            socket, asio::buffer(request), asio::as_tuple(asio::use_awaitable));
        if (wec) co_return;
        std::string buffer;
        bool header_done = false;
        char chunk[8192];
        for (;;) {
            auto [ec, n] = co_await socket.async_read_some(asio::buffer(chunk),
                                                           asio::as_tuple(asio::use_awaitable));
            if (ec) break;
            buffer.append(chunk, n);
            if (!header_done) {
                const auto end = buffer.find("\r\n\r\n");
                if (end == std::string::npos) continue;
                if (buffer.rfind("HTTP/1.1 200", 0) != 0) {
                    error = buffer.substr(0, end);
                    break;
                }
                buffer.erase(0, end + 4);
                header_done = true;
                connected = true;
            }
            std::size_t pos;
            while ((pos = buffer.find("\n\n")) != std::string::npos) {
                Frame f;
                std::string_view block{buffer.data(), pos};
                while (!block.empty()) {
                    const auto nl = block.find('\n');
                    const auto line = block.substr(0, nl);
                    block =
                        nl == std::string_view::npos ? std::string_view{} : block.substr(nl + 1);
                    if (line.rfind("id: ", 0) == 0) f.id = std::string{line.substr(4)};
                    if (line.rfind("event: ", 0) == 0) f.event = std::string{line.substr(7)};
                    if (line.rfind("data: ", 0) == 0) f.data = std::string{line.substr(6)};
                }
                buffer.erase(0, pos + 2);
                if (!f.data.empty()) frames.push_back(std::move(f));
            }
            if (done(frames)) break;
        }
        boost::system::error_code ignored;
        socket.close(ignored);
    }
};

std::size_t count_events(const std::vector<Frame>& frames) {
    return static_cast<std::size_t>(std::count_if(
        frames.begin(), frames.end(), [](const Frame& f) { return f.event.empty(); }));
}

}  // namespace

// --- pure parts ------------------------------------------------------------------------------

TEST_CASE("addresses: a port alone is loopback - hosts must be IPs", "[http]") {
    std::string error;
    auto a = parse_http_address("8080", error);
    REQUIRE(a);
    CHECK(a->host == "127.0.0.1");
    CHECK(a->port == 8080);
    a = parse_http_address("0.0.0.0:9000", error);
    REQUIRE(a);
    CHECK(a->host == "0.0.0.0");
    CHECK_FALSE(is_loopback_host(a->host));
    a = parse_http_address("[::1]:80", error);
    REQUIRE(a);
    CHECK(a->host == "::1");
    CHECK(is_loopback_host("::1"));
    CHECK(parse_http_address("localhost:1", error)->host == "127.0.0.1");
    CHECK_FALSE(parse_http_address("70000", error));
    CHECK_FALSE(parse_http_address("example.com:80", error));
    CHECK_FALSE(parse_http_address(":80", error));
    CHECK_FALSE(parse_http_address("80x", error));
}

TEST_CASE("targets, hosts, tokens and artifact names", "[http]") {
    auto t = parse_target("/api/tickets/PROJ-1?status=backlog%2Creview&all");
    REQUIRE(t);
    CHECK(t->segments == std::vector<std::string>{"api", "tickets", "PROJ-1"});
    CHECK(t->get("status") == "backlog,review");
    CHECK(t->has("all"));
    CHECK_FALSE(parse_target("/a%zz"));
    CHECK_FALSE(parse_target("/a%00b"));
    CHECK_FALSE(parse_target("http://x/"));
    CHECK(parse_target("/a/..%2F..%2Fetc")->segments[1] == "../../etc");

    CHECK(host_is_loopback("127.0.0.1:8080"));
    CHECK(host_is_loopback("localhost:1"));
    CHECK(host_is_loopback("[::1]:8080"));
    CHECK_FALSE(host_is_loopback("evil.example:8080"));
    CHECK_FALSE(host_is_loopback("127.0.0.1.evil.example"));
    CHECK_FALSE(host_is_loopback(""));

    CHECK(presented_token("Bearer abc", "") == "abc");
    CHECK(presented_token("", "x=1; board_token=t0k") == "t0k");
    CHECK(same_token("abc", "abc"));
    CHECK_FALSE(same_token("abc", "abd"));

    CHECK(is_valid_artifact_name("research.md"));
    CHECK_FALSE(is_valid_artifact_name("../board.yaml"));
    CHECK_FALSE(is_valid_artifact_name(".."));
    CHECK_FALSE(is_valid_artifact_name(".hidden"));
    CHECK_FALSE(is_valid_artifact_name("a/b.md"));
    CHECK_FALSE(is_valid_artifact_name("a..md"));
}

TEST_CASE("the token file is made once, mode 0600, and refused when others can read it", "[http]") {
    TempBoard board;
    bool generated = false;
    std::string error;
    auto first = load_or_create_token(board.dir, generated, error);
    REQUIRE(first);
    CHECK(generated);
    CHECK(first->size() == 64);

    struct stat st {};

    REQUIRE(::stat((board.dir / ".board/http-token").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    auto second = load_or_create_token(board.dir, generated, error);
    REQUIRE(second);
    CHECK_FALSE(generated);
    CHECK(*second == *first);
    ::chmod((board.dir / ".board/http-token").c_str(), 0644);
    CHECK_FALSE(load_or_create_token(board.dir, generated, error));
    CHECK(error.find("chmod 600") != std::string::npos);
}

TEST_CASE("the feed numbers events across tickets and resumes only what it can prove",
          "[http][feed]") {
    TempBoard board;
    const auto a = board.create("a");
    EventFeed feed(board.dir, 100, 3);
    feed.prime();
    CHECK(feed.poll(a).empty());  // history, not news
    const auto b = board.create("b");
    board.append(a, {NoteAdded{"one"}});
    auto got = feed.poll(b);
    REQUIRE(got.size() == 1);
    CHECK(got[0].id == 100);
    CHECK(got[0].seq == 1);
    got = feed.poll(a);
    REQUIRE(got.size() == 1);
    CHECK(got[0].id == 101);
    CHECK(got[0].ticket == a);
    CHECK(got[0].seq == 2);
    CHECK(json::parse(got[0].data).at("type") == "note");
    board.append(a, {NoteAdded{"two"}, NoteAdded{"three"}});
    CHECK(feed.poll(a).size() == 2);  // ids 102, 103; the journal keeps 101..103
    CHECK(feed.last_id() == 103);
    CHECK(feed.since(103)->empty());
    CHECK(feed.since(101)->size() == 2);
    CHECK(feed.since(100)->size() == 3);
    CHECK_FALSE(feed.since(99));   // 100 fell out of the journal
    CHECK_FALSE(feed.since(104));  // from the future: another server run
    CHECK(feed.poll("../x").empty());
    CHECK(feed.changed_since_last_read().empty());
    board.append(b, {NoteAdded{"x"}});
    CHECK(feed.changed_since_last_read() == std::vector<std::string>{b});
}

// --- the API ---------------------------------------------------------------------------------

TEST_CASE("list and show: the CLI's JSON, filters, 404 for unknown and malformed ids",
          "[http][api]") {
    TempBoard board;
    const auto a = board.create("first");
    const auto b = board.create("second", "approval");
    Running server(options_for(board));
    const auto port = server.port();

    auto r = get(port, "/api/tickets");
    REQUIRE(r.status == 200);
    CHECK(r.headers[bhttp::field::content_type] == "application/json");
    REQUIRE(r.json().as_array().size() == 2);
    r = get(port, "/api/tickets?awaiting=approval");
    REQUIRE(r.status == 200);
    REQUIRE(r.json().as_array().size() == 1);
    CHECK(text(r.json().as_array()[0].at("id")) == b);
    r = get(port, "/api/tickets?awaiting");
    CHECK(r.json().as_array().size() == 1);
    r = get(port, "/api/tickets?status=nonsense");
    CHECK(r.status == 422);
    CHECK(error_of(r).find("nonsense") != std::string::npos);

    r = get(port, "/api/tickets/" + a);
    REQUIRE(r.status == 200);
    CHECK(r.json().at("title") == "first");
    CHECK(r.json().at("status") == "backlog");
    CHECK(get(port, "/api/tickets/PROJ-99").status == 404);
    r = get(port, "/api/tickets/..%2F..%2Fetc");
    CHECK(r.status == 404);
    CHECK(error_of(r).find("not a ticket id") != std::string::npos);
    CHECK(get(port, "/api/nothing").status == 404);
    CHECK(call(port, bhttp::verb::delete_, "/api/tickets").status == 405);
}

TEST_CASE("board-wide answers are cached until the feed sees an append", "[http][api]") {
    TempBoard board;
    board.create("one");
    Running server(options_for(board));  // no rescan: only writes and ticket_changed()
    const auto port = server.port();
    CHECK(get(port, "/api/tickets").json().as_array().size() == 1);
    const auto two = board.create("two");  // another process, unreported
    CHECK(get(port, "/api/tickets").json().as_array().size() == 1);
    server.server.ticket_changed(two);
    std::size_t seen = 0;
    for (int i = 0; i < 200 && seen != 2; ++i) {
        seen = get(port, "/api/tickets").json().as_array().size();
        if (seen != 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(seen == 2);
    REQUIRE(post(port, "/api/tickets", R"({"title":"three"})").status == 201);
    CHECK(get(port, "/api/tickets").json().as_array().size() == 3);  // an API write: at once
    REQUIRE(post(port, "/api/tickets/" + two + "/note", R"({"text":"x"})").status == 200);
    REQUIRE(post(port, "/api/tickets/" + two + "/cancel", R"({"reason":"x"})").status == 200);
    // The kept board answers exactly as a fresh load from the logs does.
    app::Board fresh{board.dir};
    ListFilter all;
    all.all = true;
    CHECK(get(port, "/api/tickets?all=1").body == app::to_json(fresh.list(all).value()));
    CHECK(get(port, "/api/tickets").body == app::to_json(fresh.list(ListFilter{}).value()));
}

TEST_CASE("events, state at a seq, artifacts - traversal and symlinks refused", "[http][api]") {
    TempBoard board;
    const auto a = board.create("with history");
    board.append(a, {NoteAdded{"n1"}, NoteAdded{"n2"}});
    const auto dir = *ticket_dir(board.dir, a);
    std::ofstream(dir / "research.md") << "# Findings\n\n<script>x</script>\n";
    fs::create_symlink(board.dir / "board.yaml", dir / "escape.md");
    Running server(options_for(board));
    const auto port = server.port();

    auto r = get(port, "/api/tickets/" + a + "/events");
    REQUIRE(r.status == 200);
    REQUIRE(r.json().as_array().size() == 3);
    CHECK(r.json().as_array()[0].at("type") == "created");
    r = get(port, "/api/tickets/" + a + "/events?after=2");
    REQUIRE(r.json().as_array().size() == 1);
    CHECK(r.json().as_array()[0].at("seq") == 3);
    CHECK(get(port, "/api/tickets/" + a + "/events?after=x").status == 422);

    r = get(port, "/api/tickets/" + a + "/state?seq=2");
    REQUIRE(r.status == 200);
    CHECK(r.json().at("seq") == 2);
    CHECK(r.json().at("last_seq") == 3);
    CHECK(r.json().at("ticket").at("notes").as_array().size() == 1);
    CHECK(r.json().at("event").at("type") == "note");
    CHECK(get(port, "/api/tickets/" + a + "/state").status == 422);

    r = get(port, "/api/tickets/" + a + "/artifacts");
    CHECK(r.status == 200);
    CHECK(r.json().is_object());
    r = get(port, "/api/tickets/" + a + "/artifacts/research.md");
    REQUIRE(r.status == 200);
    CHECK(r.body.find("# Findings") == 0);
    CHECK(r.headers[bhttp::field::content_type] == "text/plain; charset=utf-8");
    CHECK(get(port, "/api/tickets/" + a + "/artifacts/nope.md").status == 404);
    CHECK(get(port, "/api/tickets/" + a + "/artifacts/..%2F..%2Fboard.yaml").status == 404);
    CHECK(get(port, "/api/tickets/" + a + "/artifacts/../../board.yaml").status == 404);
    CHECK(get(port, "/api/tickets/" + a + "/artifacts/.%2E").status == 404);
    r = get(port, "/api/tickets/" + a + "/artifacts/escape.md");
    CHECK(r.status == 403);
    CHECK(error_of(r).find("symbolic link") != std::string::npos);
    CHECK(get(port, "/api/tickets/" + a + "/artifacts/").status == 200);  // the list, no listing
}

TEST_CASE("create, approve, reject, note, cancel: the CLI's results and refusals", "[http][api]") {
    TempBoard board;
    const auto gated = board.create("gated", "approval");
    const auto other = board.create("other", "approval");
    Running server(options_for(board));
    const auto port = server.port();

    auto r = post(port, "/api/tickets", R"({"title":"from the web","priority":1,"labels":["ui"]})");
    REQUIRE(r.status == 201);
    const std::string created = r.json().at("id").as_string().c_str();
    CHECK(r.json().at("priority") == 1);
    r = get(port, "/api/tickets/" + created + "/events");
    CHECK(r.json().as_array()[0].at("by") == "human:web");
    CHECK(post(port, "/api/tickets", R"({"priority":1})").status == 422);
    CHECK(post(port, "/api/tickets", R"({"title":5})").status == 422);
    CHECK(post(port, "/api/tickets", "not json").status == 422);
    r = post(port, "/api/tickets", R"({"title":"x","type":"nonsense"})");
    CHECK((r.status == 422 || r.status == 409));
    r = post(port, "/api/tickets", R"({"title":"x","parent":"PROJ-77"})");
    CHECK(r.status >= 400);

    r = post(
        port, "/api/tickets/" + gated + "/approve", R"({"note":"ok"})", {{"X-Board-As", "bob"}});
    REQUIRE(r.status == 200);
    CHECK_FALSE(r.json().as_object().contains("awaiting"));
    r = get(port, "/api/tickets/" + gated + "/events");
    CHECK(r.json().as_array().back().at("by") == "human:bob");
    r = post(port, "/api/tickets/" + gated + "/approve", "{}");
    CHECK(r.status == 409);
    CHECK(error_of(r).find("approve " + gated + ": ") == 0);
    CHECK(post(port, "/api/tickets/" + gated + "/approve", "{}", {{"X-Board-As", "two words"}})
              .status == 422);

    CHECK(post(port, "/api/tickets/" + other + "/reject", "{}").status == 422);
    r = post(port, "/api/tickets/" + other + "/reject", R"({"feedback":""})");
    CHECK(r.status == 409);
    r = post(port, "/api/tickets/" + other + "/reject", R"({"feedback":"try again"})");
    REQUIRE(r.status == 200);

    r = post(port, "/api/tickets/" + other + "/note", R"({"text":"a thought"})");
    REQUIRE(r.status == 200);
    CHECK(r.json().at("notes").as_array().back().at("from") == "human");
    CHECK(post(port, "/api/tickets/" + other + "/note", "{}").status == 422);
    CHECK(post(port, "/api/tickets/PROJ-404/note", R"({"text":"x"})").status == 404);

    r = post(port, "/api/tickets/" + other + "/cancel", R"({"reason":"not needed"})");
    REQUIRE(r.status == 200);
    CHECK(r.json().at("status") == "done");
    r = post(port, "/api/tickets/" + other + "/cancel", "{}");
    CHECK(r.status == 409);
    CHECK(post(port, "/api/tickets/" + other + "/fly", "{}").status == 404);
}

TEST_CASE("questions: pending list, answers validated by the reducer", "[http][api]") {
    TempBoard board;
    const auto a = board.create("asks");
    QuestionAsked q;
    q.question_id = "q1";
    q.question = "Ship it?";
    q.response_type = ResponseType::boolean;
    board.append(a, {q});
    Running server(options_for(board));
    const auto port = server.port();

    auto r = get(port, "/api/questions?pending=1");
    REQUIRE(r.status == 200);
    REQUIRE(r.json().as_array().size() == 1);
    CHECK(text(r.json().as_array()[0].at("id")) == a + ".q1");
    r = get(port, "/api/inbox");
    REQUIRE(r.status == 200);
    CHECK(r.json().as_array().size() == 1);

    r = post(port, "/api/questions/" + a + ".q1/answer", R"({"value":"maybe"})");
    CHECK(r.status == 409);
    CHECK(error_of(r).find("true or false") != std::string::npos);
    CHECK(post(port, "/api/questions/" + a + ".q1/answer", "{}").status == 422);
    CHECK(post(port, "/api/questions/nonsense/answer", R"({"value":"x"})").status == 422);
    CHECK(post(port, "/api/questions/PROJ-99.q1/answer", R"({"value":"x"})").status == 404);
    r = post(port, "/api/questions/" + a + ".q1/answer", R"({"value":true,"note":"go"})");
    REQUIRE(r.status == 200);
    CHECK(r.json().at("questions").as_array()[0].at("answer") == "true");
    CHECK(post(port, "/api/questions/" + a + ".q1/answer", R"({"value":true})").status == 409);
    CHECK(get(port, "/api/questions?pending=1").json().as_array().empty());
}

// --- security --------------------------------------------------------------------------------

TEST_CASE("a non-loopback bind needs the token - writes without it are refused",
          "[http][security]") {
    TempBoard board;
    const auto a = board.create("guarded", "approval");
    auto options = options_for(board);
    options.address.host = "0.0.0.0";
    options.token.reset();  // made in .board/http-token
    Running server(options);
    const auto port = server.port();
    const std::string token = server.server.token();
    REQUIRE(token.size() == 64);
    CHECK(server.server.token_generated());
    CHECK(server.server.page_url().find("?token=" + token) != std::string::npos);

    auto r = post(port, "/api/tickets/" + a + "/approve", "{}");
    CHECK(r.status == 401);
    CHECK(get(port, "/api/tickets").status == 401);
    CHECK(post(port, "/api/tickets/" + a + "/approve", "{}", {{"Authorization", "Bearer wrong"}})
              .status == 401);
    CHECK(get(port, "/api/tickets/" + a).status == 401);
    r = post(port, "/api/tickets/" + a + "/approve", "{}", {{"Authorization", "Bearer " + token}});
    CHECK(r.status == 200);
    CHECK(get(port, "/api/tickets", {{"Cookie", "board_token=" + token}}).status == 200);
    // The page itself carries no data; the link with the token sets the cookie.
    CHECK(get(port, "/").status == 200);
    r = get(port, "/?token=" + token);
    CHECK(r.status == 303);
    CHECK(std::string{r.headers[bhttp::field::set_cookie]}.find("HttpOnly") != std::string::npos);
    CHECK(get(port, "/?token=nope").status == 401);
}

TEST_CASE("on loopback every write needs the token, reads do not", "[http][security]") {
    TempBoard board;
    const auto a = board.create("guarded", "approval");
    auto options = options_for(board);
    options.token.reset();
    Running server(options);
    const auto port = server.port();
    const std::string token = server.server.token();
    REQUIRE(token.size() == 64);
    CHECK(server.server.page_url().find("?token=" + token) != std::string::npos);
    // An agent on this machine reaches the port, but not the token: it cannot approve.
    const auto before = get(port, "/api/tickets/" + a + "/events").json().as_array().size();
    for (const auto& bad : {std::string{}, std::string{"Bearer "}, "Bearer " + test_token}) {
        CAPTURE(bad);
        CHECK(post(port, "/api/tickets/" + a + "/approve", "{}", {{"Authorization", bad}}).status ==
              401);
        CHECK(post(port, "/api/tickets", R"({"title":"x"})", {{"Authorization", bad}}).status ==
              401);
    }
    CHECK(get(port, "/api/tickets/" + a + "/events").json().as_array().size() == before);
    CHECK(get(port, "/api/tickets").status == 200);
    CHECK(post(port,
               "/api/tickets/" + a + "/approve",
               "{}",
               {{"Cookie", "board_token=" + token}, {"Authorization", ""}})
              .status == 200);
}

TEST_CASE("a non-loopback bind without a token policy is refused at start", "[http][security]") {
    TempBoard board;
    auto options = options_for(board);
    options.address.host = "0.0.0.0";
    options.token_policy = TokenPolicy::none;
    asio::io_context io;
    HttpServer server(io, options);
    CHECK(server.start().find("without a token") != std::string::npos);
}

TEST_CASE("CSRF and Host checks, body limit", "[http][security]") {
    TempBoard board;
    const auto a = board.create("target", "approval");
    auto options = options_for(board);
    options.max_body_bytes = 1024;
    Running server(options);
    const auto port = server.port();

    auto r = call(port,
                  bhttp::verb::post,
                  "/api/tickets/" + a + "/approve",
                  "{}",
                  {{"Authorization", "Bearer " + test_token}},
                  true);
    CHECK(r.status == 403);
    CHECK(error_of(r).find("X-Board-Request") != std::string::npos);
    r = post(port, "/api/tickets/" + a + "/approve", "{}", {{"Origin", "http://evil.example"}});
    CHECK(r.status == 403);
    r = get(port, "/api/tickets", {{"Host", "evil.example:80"}});
    CHECK(r.status == 403);

    const std::string big = R"({"text":")" + std::string(4096, 'x') + "\"}";
    r = post(port, "/api/tickets/" + a + "/note", big);
    CHECK(r.status == 413);
    CHECK(get(port, "/api/tickets/" + a).json().at("notes").as_array().empty());
    r = post(port,
             "/api/tickets/" + a + "/approve",
             "{}",
             {{"Origin", "http://127.0.0.1:" + std::to_string(port)}});
    CHECK(r.status == 200);
}

TEST_CASE("the page: index, scripts, 404 for anything else", "[http][page]") {
    TempBoard board;
    Running server(options_for(board));
    const auto port = server.port();
    auto r = get(port, "/");
    REQUIRE(r.status == 200);
    CHECK(r.headers[bhttp::field::content_type] == "text/html; charset=utf-8");
    CHECK(r.body.find("<html") != std::string::npos);
    CHECK(!std::string{r.headers["Content-Security-Policy"]}.empty());
    CHECK(get(port, "/app.js").status == 200);
    CHECK(get(port, "/app.css").status == 200);
    CHECK(get(port, "/tickets/").status == 404);
    CHECK(get(port, "/../board.yaml").status == 404);
}

// --- live events -----------------------------------------------------------------------------

TEST_CASE("SSE: 50 subscribers get 5,000 events in order - a resume gets exactly the missed",
          "[http][sse]") {
    constexpr int subscribers = 50;
    constexpr int tickets = 10;
    constexpr int batches = 50;     // per ticket
    constexpr int batch_size = 10;  // 10 tickets x 50 batches x 10 = 5,000 events
    constexpr std::size_t total = tickets * batches * batch_size;
    TempBoard board;
    std::vector<std::string> ids;
    for (int i = 0; i < tickets; ++i) ids.push_back(board.create("t" + std::to_string(i)));
    Running server(options_for(board));
    const auto port = server.port();

    asio::io_context clients;
    std::vector<SseClient> subs(subscribers);
    std::atomic<int> ready{0};
    for (auto& sub : subs) {
        asio::co_spawn(clients,
                       sub.run(port,
                               "/api/events",
                               "",
                               [&ready, &sub](const std::vector<Frame>& frames) {
                                   if (!frames.empty() && !sub.counted) {  // the hello
                                       sub.counted = true;
                                       ++ready;
                                   }
                                   return count_events(frames) >= total;
                               }),
                       asio::detached);
    }
    // A late joiner: reads 1,000, drops, and resumes from its Last-Event-ID at the end.
    SseClient early, resumed;
    asio::co_spawn(clients,
                   early.run(port,
                             "/api/events",
                             "",
                             [&](const std::vector<Frame>& frames) {
                                 if (!frames.empty() && !early.counted) {
                                     early.counted = true;
                                     ++ready;
                                 }
                                 return count_events(frames) >= 1000;
                             }),
                   asio::detached);
    std::thread client_thread([&] { clients.run(); });
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (ready < subscribers + 1 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    REQUIRE(ready == subscribers + 1);

    const auto started = std::chrono::steady_clock::now();
    std::vector<EventLog> logs;
    for (const auto& id : ids) logs.emplace_back(*ticket_dir(board.dir, id));
    for (int b = 0; b < batches; ++b) {
        for (int t = 0; t < tickets; ++t) {
            auto result = logs[static_cast<std::size_t>(t)].transact(
                Actor{ActorKind::human, "alice"}, [&](const Ticket&) {
                    std::vector<Payload> notes;
                    for (int k = 0; k < batch_size; ++k)
                        notes.emplace_back(NoteAdded{"n" + std::to_string(b * batch_size + k)});
                    return notes;
                });
            REQUIRE(std::holds_alternative<Committed>(result));
            server.server.ticket_changed(ids[static_cast<std::size_t>(t)]);
        }
    }
    client_thread.join();
    const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
    WARN("5,000 events to 50 subscribers in " << took.count() << " s");

    // The first subscriber's stream is checked event by event; every other one must be the
    // same stream (parsing 250,000 frames under ASan would dominate the test's time).
    for (const auto& sub : subs) {
        REQUIRE(sub.error.empty());
        REQUIRE(count_events(sub.frames) == total);
        REQUIRE(sub.frames.size() == subs[0].frames.size());
        std::uint64_t previous = std::stoull(sub.frames[0].id);  // the hello's id
        std::map<std::string, std::int64_t> last_seq;
        for (std::size_t i = 1; i < sub.frames.size(); ++i) {
            const auto& f = sub.frames[i];
            const auto id = std::stoull(f.id);
            REQUIRE(id == previous + 1);  // every id, once, in order
            previous = id;
            if (&sub != &subs[0]) {
                REQUIRE(f.data == subs[0].frames[i].data);
                continue;
            }
            const auto data = json::parse(f.data);
            const std::string ticket = data.at("ticket").as_string().c_str();
            const auto seq = data.at("seq").as_int64();
            REQUIRE(seq == (last_seq.count(ticket) ? last_seq[ticket] : 1) + 1);
            last_seq[ticket] = seq;
            REQUIRE(data.at("event").at("seq").as_int64() == seq);
        }
    }
    // Resume: everything after the early subscriber's last id, and nothing else.
    const std::size_t seen = count_events(early.frames);  // 1,000 or a little more
    REQUIRE(seen >= 1000);
    const std::string last = early.frames.back().id;
    asio::io_context again;
    asio::co_spawn(again,
                   resumed.run(port,
                               "/api/events",
                               last,
                               [&](const std::vector<Frame>& frames) {
                                   return count_events(frames) >= total - seen;
                               }),
                   asio::detached);
    again.run();
    REQUIRE(count_events(resumed.frames) == total - seen);
    CHECK(std::stoull(resumed.frames.front().id) == std::stoull(last) + 1);
    CHECK(resumed.frames.back().id == subs[0].frames.back().id);
    CHECK(resumed.frames.front().data == subs[0].frames[seen + 1].data);
}

TEST_CASE("SSE: an unknown Last-Event-ID gets a reset - ?ticket= resumes from the log",
          "[http][sse]") {
    TempBoard board;
    const auto a = board.create("watched");
    const auto b = board.create("other");
    board.append(a, {NoteAdded{"1"}, NoteAdded{"2"}, NoteAdded{"3"}});
    auto options = options_for(board);
    options.rescan = std::chrono::milliseconds(20);  // no ticket_changed: the rescan finds it
    Running server(options);
    const auto port = server.port();

    asio::io_context io;
    SseClient reset;
    asio::co_spawn(io,
                   reset.run(port, "/api/events", "12", [](const auto& f) { return !f.empty(); }),
                   asio::detached);
    io.run();
    REQUIRE(reset.frames.size() == 1);
    CHECK(reset.frames[0].event == "reset");

    SseClient per_ticket;
    asio::co_spawn(io,
                   per_ticket.run(port,
                                  "/api/events?ticket=" + a,
                                  a + ":2",
                                  [](const auto& f) { return count_events(f) >= 4; }),
                   asio::detached);
    std::thread writer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        board.append(b, {NoteAdded{"elsewhere"}});
        board.append(a, {NoteAdded{"4"}, NoteAdded{"5"}});
    });
    io.restart();
    io.run();
    writer.join();
    std::vector<std::string> got;
    for (const auto& f : per_ticket.frames)
        if (f.event.empty()) got.push_back(f.id);
    CHECK(got == std::vector<std::string>{a + ":3", a + ":4", a + ":5", a + ":6"});
    CHECK(get(port, "/api/events?ticket=../x").status == 404);
}
