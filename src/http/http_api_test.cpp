// Tests the HTTP JSON API over loopback: list, show, events, state, artifacts, writes, answers.

#include "http/http_test_support.hpp"
#include "support/wait.hpp"

#include <board/app.hpp>
#include <board/board_dir.hpp>
#include <board/event_log.hpp>
#include <board/http.hpp>

#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace bhttp = boost::beast::http;
namespace json = boost::json;
namespace fs = std::filesystem;
using namespace board;
using namespace board::http;
using namespace board::http_test;

namespace {

std::string text(const json::value& v) {
    return v.is_string() ? std::string{v.as_string()} : json::serialize(v);
}

}  // namespace

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

TEST_CASE("stats: board stats --json over the API, the window given by since", "[http][api]") {
    TempBoard board;
    const auto id = board.create("not needed after all");
    REQUIRE(app::Board{board.dir}.cancel(id, "not needed", Actor{ActorKind::human, "alice"}));
    Running server(options_for(board));
    const auto port = server.port();
    auto r = get(port, "/api/stats");
    REQUIRE(r.status == 200);
    CHECK(r.json().at("created").as_int64() == 1);
    CHECK(r.json().at("cancelled").as_int64() == 1);
    r = get(port, "/api/stats?since=2999-01-01T00:00:00Z");
    REQUIRE(r.status == 200);
    CHECK(r.json().at("created").as_int64() == 0);
    r = get(port, "/api/stats?since=yesterday");
    CHECK(r.status == 422);
    CHECK(r.body.find("yesterday") != std::string::npos);
    CHECK(call(port, bhttp::verb::post, "/api/stats").status == 405);
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
    // The change reaches the server's thread as a posted task: each request waits on an
    // answer, and an answer after that task has run counts two.
    std::size_t seen = 0;
    for (int i = 0; i < 200 && seen != 2; ++i)
        seen = get(port, "/api/tickets").json().as_array().size();
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
    // A second name of a file outside the ticket (as a hard link to /etc/passwd would be).
    std::ofstream(board.dir / "secret.txt") << "not the ticket's\n";
    fs::create_hard_link(board.dir / "secret.txt", dir / "linked.md");
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
    r = get(port, "/api/tickets/" + a + "/artifacts/linked.md");
    CHECK(r.status == 403);
    CHECK(r.body.find("not the ticket's") == std::string::npos);
    CHECK(get(port, "/api/tickets/" + a + "/artifacts/").status == 200);  // the list, no listing
}

TEST_CASE("?html=1: a ticket's description and an artifact rendered from Markdown", "[http][api]") {
    TempBoard board;
    app::CreateRequest request;
    request.title = "rendered";
    request.description = "1. one\n2. two\n\n<script>x()</script> [go](javascript:x())\n";
    auto made = app::Board{board.dir}.create(request, Actor{ActorKind::human, "alice"});
    REQUIRE(made);
    const std::string id = made.value().ticket.id;
    const auto dir = *ticket_dir(board.dir, id);
    std::ofstream(dir / "research.md")
        << "---\nstatus: complete\nsummary: found\n---\n# Findings\n\n| a | b |\n|---|---|\n"
           "| 1 | 2 |\n\n<img src=x onerror=y>\n";
    Running server(options_for(board));
    const auto port = server.port();

    // The ticket: `show --json` as without ?html=1, plus description_html.
    const auto plain = get(port, "/api/tickets/" + id);
    REQUIRE(plain.status == 200);
    CHECK_FALSE(plain.json().as_object().contains("description_html"));
    auto r = get(port, "/api/tickets/" + id + "?html=1");
    REQUIRE(r.status == 200);
    CHECK(r.headers[bhttp::field::content_type] == "application/json");
    auto ticket = r.json().as_object();
    REQUIRE(ticket.contains("description_html"));
    const std::string html = text(ticket.at("description_html"));
    CAPTURE(html);
    CHECK(html.find("<ol>\n<li>one</li>\n<li>two</li>\n</ol>") == 0);
    CHECK(html.find("&lt;script&gt;x()&lt;/script&gt;") != std::string::npos);
    CHECK(html.find("<a href=\"#\">go</a>") != std::string::npos);
    CHECK(html.find("javascript") == std::string::npos);
    ticket.erase("description_html");
    CHECK(json::value(std::move(ticket)) == plain.json());
    CHECK(get(port, "/api/tickets/" + id + "?html=0").body == plain.body);

    // The artifact: a fragment, front matter left out, under the same CSP as the text.
    r = get(port, "/api/tickets/" + id + "/artifacts/research.md?html=1");
    REQUIRE(r.status == 200);
    CAPTURE(r.body);
    CHECK(r.headers[bhttp::field::content_type] == "text/html; charset=utf-8");
    CHECK(r.headers["Content-Security-Policy"] == "default-src 'none'; sandbox");
    CHECK(r.headers["X-Content-Type-Options"] == "nosniff");
    CHECK(r.body.find("<h1>Findings</h1>\n<table>") == 0);
    CHECK(r.body.find("<td>2</td>") != std::string::npos);
    CHECK(r.body.find("status: complete") == std::string::npos);
    CHECK(r.body.find("<img") == std::string::npos);
    CHECK(r.body.find("&lt;img src=x onerror=y&gt;") != std::string::npos);
    r = get(port, "/api/tickets/" + id + "/artifacts/research.md");
    CHECK(r.headers[bhttp::field::content_type] == "text/plain; charset=utf-8");
    CHECK(r.body.find("---\nstatus: complete") == 0);
    CHECK(get(port, "/api/tickets/" + id + "/artifacts/nope.md?html=1").status == 404);
    CHECK(get(port, "/api/tickets/PROJ-99?html=1").status == 404);
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
    REQUIRE(r.json().as_array().size() == 1);
    // The inbox item carries what is asked: the question to answer and the command.
    const auto inbox = r.json();
    const auto& request = inbox.as_array()[0].at("request");
    CHECK(request.at("questions").as_array().at(0).at("text") == "Ship it?");
    CHECK(text(request.at("commands").as_array().at(0)) == "board answer " + a + ".q1 VALUE");

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

namespace {

/// A run as the daemon records it: `run-started` (by the system), and what it printed.
std::filesystem::path start_run(const TempBoard& board, const std::string& id, const char* run) {
    auto started = transact(*ticket_dir(board.dir, id), Actor{ActorKind::system, ""}, [&](auto&) {
        return std::vector<Payload>{RunStarted{run, Status::research, 1, 1, {}, {}}};
    });
    REQUIRE(std::holds_alternative<Committed>(started));
    const auto runs = *ticket_dir(board.dir, id) / "runs";
    std::filesystem::create_directories(runs);
    std::ofstream(runs / (run_file_stem(run, Status::research) + ".prompt.md")) << "Research it\n";
    return runs / (run_file_stem(run, Status::research) + ".log");
}

}  // namespace

TEST_CASE("runs: the list, a run's prompt and the tail of its output, unknown runs 404",
          "[http][runs]") {
    TempBoard board;
    const auto id = board.create("Find out");
    const auto log = start_run(board, id, "0001");
    std::ofstream(log) << "line one\nline two\n";
    Running server(options_for(board));
    const auto port = server.port();

    const auto runs = get(port, "/api/tickets/" + id + "/runs");
    REQUIRE(runs.status == 200);
    const auto listed = runs.json();
    const auto& run = listed.as_array().at(0).as_object();
    CHECK(run.at("run") == "0001");
    CHECK(run.at("phase") == "research");
    CHECK(run.at("end").is_null());

    const auto prompt = get(port, "/api/tickets/" + id + "/runs/0001/prompt");
    CHECK(prompt.status == 200);
    CHECK(prompt.body == "Research it\n");
    const auto output = get(port, "/api/tickets/" + id + "/runs/0001/output");
    CHECK(output.status == 200);
    CHECK(output.body == "line one\nline two\n");
    const auto tail = get(port, "/api/tickets/" + id + "/runs/0001/output?tail=9");
    CHECK(tail.body == "line two\n");
    CHECK(tail.headers["Board-Run-Bytes"] == "18");

    CHECK(get(port, "/api/tickets/" + id + "/runs/0002/output").status == 404);
    CHECK(get(port, "/api/tickets/" + id + "/runs/..%2F..%2Fboard.yaml/output").status == 404);
    CHECK(get(port, "/api/tickets/" + id + "/runs/0001/output?tail=x").status == 422);
    // No branch, no diff: the refusal says why.
    const auto diff = get(port, "/api/tickets/" + id + "/diff");
    CHECK(diff.status == 409);
    CHECK(error_of(diff).find("has no branch") != std::string::npos);
}

TEST_CASE("reject with line comments: they reach the feedback as file:line, bad ones are 422",
          "[http][api]") {
    TempBoard board;
    const auto id = board.create("Review me", "approval");
    Running server(options_for(board));
    const auto port = server.port();
    const auto path = "/api/tickets/" + id + "/reject";

    const auto bad = post(port, path, R"({"comments":[{"file":"a.cpp","line":0,"text":"x"}]})");
    CHECK(bad.status == 422);
    CHECK(post(port, path, R"({"comments":"a.cpp:1"})").status == 422);
    CHECK(post(port, path, R"({"comments":[{"file":"a.cpp","line":3,"text":"  "}]})").status ==
          422);

    const auto ok = post(port,
                         path,
                         R"({"feedback":"Close.","comments":[
                              {"file":"src/retry.cpp","line":42,"text":"no sleep here"},
                              {"file":"README.md","line":7,"text":"say why"}]})");
    REQUIRE(ok.status == 200);
    const auto notes = ok.json().at("notes").as_array();
    REQUIRE_FALSE(notes.empty());
    const std::string feedback{notes.back().at("text").as_string()};
    CHECK(feedback ==
          "Close.\n\nComments on the diff:\n- src/retry.cpp:42: no sleep here\n- README.md:7: "
          "say why");
}

TEST_CASE("a diff that takes long holds up no other request", "[http][api]") {
    TempBoard board;
    const auto id = board.create("Slow diff");
    auto started = transact(*ticket_dir(board.dir, id), Actor{ActorKind::system, ""}, [&](auto&) {
        return std::vector<Payload>{RunStarted{"0001", Status::research, 1, 1, {}, "board/" + id}};
    });
    REQUIRE(std::holds_alternative<Committed>(started));
    // git, as the diff runs it, takes its time: it says it started, then waits 3 s.
    const auto bin = board.dir / "slow-bin";
    std::filesystem::create_directories(bin);
    const auto marker = board.dir / "git-started";
    std::ofstream(bin / "git") << "#!/bin/sh\ntouch '" << marker.string() << "'\nsleep 3\nexit 1\n";
    std::filesystem::permissions(bin / "git", std::filesystem::perms::owner_all);
    const std::string path_before = std::getenv("PATH") ? std::getenv("PATH") : "";
    ::setenv("PATH", (bin.string() + ":" + path_before).c_str(), 1);

    Running server(options_for(board));
    const auto port = server.port();
    Reply slow;
    std::thread diff([&] { slow = get(port, "/api/tickets/" + id + "/diff"); });
    const bool git_runs = board::testing::wait_until(
        {board.dir}, std::chrono::seconds{10}, [&] { return std::filesystem::exists(marker); });
    const auto asked = std::chrono::steady_clock::now();
    const auto list = get(port, "/api/tickets");
    const auto waited = std::chrono::steady_clock::now() - asked;
    diff.join();
    ::setenv("PATH", path_before.c_str(), 1);
    REQUIRE(git_runs);
    CHECK(list.status == 200);
    CHECK(waited < std::chrono::milliseconds{1500});
    // The diff itself still answers, with git's failure.
    CHECK(slow.status == 409);
}
