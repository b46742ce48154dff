// Tests HTTP security: addresses, targets, tokens, the token file, CSRF/Host/body checks, the page.

#include "http/http_test_support.hpp"
#include "http/security.hpp"

#include <board/app.hpp>
#include <board/http.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <ifaddrs.h>
#include <net/if.h>
#include <string>
#include <sys/stat.h>

namespace asio = boost::asio;
namespace bhttp = boost::beast::http;
using namespace board;
using namespace board::http;
using namespace board::http_test;

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

namespace {

/// Whether an interface of this machine that is up and not loopback has an IPv4 address:
/// then a link to a server bound to every address can name one others reach.
bool has_reachable_ipv4() {
    ifaddrs* interfaces = nullptr;
    if (::getifaddrs(&interfaces) != 0) return false;
    bool found = false;
    for (const ifaddrs* i = interfaces; i && !found; i = i->ifa_next) {
        const unsigned up = IFF_UP | IFF_RUNNING;
        found = i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & up) == up &&
                (i->ifa_flags & IFF_LOOPBACK) == 0;
    }
    ::freeifaddrs(interfaces);
    return found;
}

}  // namespace

TEST_CASE("the printed host: the bound address, or for 0.0.0.0 and :: one others can reach",
          "[http]") {
    CHECK(page_host(asio::ip::make_address("127.0.0.1")) == "127.0.0.1");
    CHECK(page_host(asio::ip::make_address("::1")) == "[::1]");
    CHECK(page_host(asio::ip::make_address("192.0.2.7")) == "192.0.2.7");
    CHECK(page_host(asio::ip::make_address("2001:db8::7")) == "[2001:db8::7]");
    for (const char* any : {"0.0.0.0", "::"}) {
        std::string host = page_host(asio::ip::make_address(any));
        CAPTURE(any, host);
        REQUIRE_FALSE(host.empty());
        if (!has_reachable_ipv4()) {
            WARN("SKIPPED (" << any
                             << "): no interface here is up with an IPv4 address but "
                                "loopback, so the link names the machine ("
                             << host << ")");
            continue;
        }
        if (host.front() == '[') host = host.substr(1, host.size() - 2);
        boost::system::error_code ec;
        const auto address = asio::ip::make_address(host, ec);
        REQUIRE_FALSE(ec);
        CHECK_FALSE(address.is_loopback());
        CHECK_FALSE(address.is_unspecified());
    }

    // The link a server prints names that host.
    TempBoard board;
    auto options = options_for(board);
    options.address.host = "0.0.0.0";
    Running everywhere(options);
    CHECK(everywhere.server.page_url().starts_with(
        "http://" + page_host(asio::ip::make_address("0.0.0.0")) + ":" +
        std::to_string(everywhere.port()) + "/?token="));
    Running loopback(options_for(board));
    CHECK(loopback.server.page_url().starts_with(
        "http://127.0.0.1:" + std::to_string(loopback.port()) + "/?token="));
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
    CHECK(parse_target("/api//tickets/")->segments == std::vector<std::string>{"api", "tickets"});
    CHECK(parse_target("/s?q=two+words%21")->get("q") == "two words!");
    CHECK_FALSE(parse_target("/s?q=a%00"));
    CHECK_FALSE(parse_target("/a b"));
    CHECK_FALSE(parse_target(""));

    CHECK(host_is_loopback("127.0.0.1:8080"));
    CHECK(host_is_loopback("localhost:1"));
    CHECK(host_is_loopback("[::1]:8080"));
    CHECK_FALSE(host_is_loopback("evil.example:8080"));
    CHECK_FALSE(host_is_loopback("127.0.0.1.evil.example"));
    CHECK_FALSE(host_is_loopback(""));
    CHECK_FALSE(host_is_loopback("localhost:evil.example"));
    CHECK_FALSE(host_is_loopback("127.0.0.1:evil.example"));
    CHECK_FALSE(host_is_loopback("evil.example@localhost"));
    CHECK(host_is_loopback("127.0.0.2"));
    CHECK(host_is_loopback("localhost"));

    CHECK(presented_token("Bearer abc") == "abc");
    CHECK(presented_token("Basic abc").empty());
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
    ::chmod((board.dir / ".board/http-token").c_str(), 0600);
    // A .board/ that others may write: refused, as ssh refuses such a ~/.ssh.
    ::chmod((board.dir / ".board").c_str(), 0777);
    CHECK_FALSE(load_or_create_token(board.dir, generated, error));
    CHECK(error.find("others can write it (mode 777): chmod go-w it") != std::string::npos);
    ::chmod((board.dir / ".board").c_str(), 0700);
    CHECK(load_or_create_token(board.dir, generated, error));
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
    // A cookie is no credential: the browser would send it to every port of this host.
    CHECK(get(port, "/api/tickets", {{"Cookie", "board_token=" + token}}).status == 401);
    // The page itself carries no data; the link with the token serves it and sets no cookie,
    // and clears the cookie an earlier version set.
    CHECK(get(port, "/").status == 200);
    r = get(port, "/?token=" + token);
    CHECK(r.status == 200);
    CHECK(r.headers.count(bhttp::field::set_cookie) == 0);
    r = get(port, "/", {{"Cookie", "board_token=" + token}});
    CHECK(std::string{r.headers[bhttp::field::set_cookie]} == "board_token=; Path=/; Max-Age=0");
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
              .status == 401);
    CHECK(post(port, "/api/tickets/" + a + "/approve", "{}", {{"Authorization", "Bearer " + token}})
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
    r = get(port, "/api/tickets", {{"Host", "localhost:evil.example"}});
    CHECK(r.status == 403);
    {
        // Two Host headers, the first one loopback: refused all the same.
        asio::io_context io;
        asio::ip::tcp::socket socket{io};
        socket.connect({asio::ip::make_address("127.0.0.1"), port});
        const std::string request =
            "GET /api/tickets HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n"
            "Connection: close\r\n\r\n";
        asio::write(socket, asio::buffer(request));
        boost::beast::flat_buffer buffer;
        bhttp::response<bhttp::string_body> two_hosts;
        bhttp::read(socket, buffer, two_hosts);
        CHECK(two_hosts.result_int() == 403);
    }

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
