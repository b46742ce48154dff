#include "orchestrator/reporter.hpp"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <iostream>
#include <sstream>

using namespace board;
using namespace board::orchestrator;

namespace {

/// Captures what the reporter prints on stdout while alive.
struct CapturedStdout {
    std::ostringstream text;
    std::streambuf* previous = std::cout.rdbuf(text.rdbuf());

    ~CapturedStdout() { std::cout.rdbuf(previous); }
};

Event event(Payload p, Actor by = Actor{}) {
    return Event{
        1, 7, "id", 1'763'892'245'000, std::move(by), std::move(p)};  // 2025-11-23T10:04:05Z
}

}  // namespace

TEST_CASE("one readable line per event, saying what happened") {
    RunFinished timed_out;
    timed_out.run = "0003";
    timed_out.timed_out = true;
    timed_out.duration_ms = 1'800'000;
    CHECK(describe_event("PROJ-3", event(timed_out)) ==
          "10:04:05 PROJ-3 #7 run-finished 0003 after 1800.0s: timed out");

    RunFinished signalled;
    signalled.run = "0004";
    signalled.signal = Signal::input_needed;
    signalled.context = "Which database?\nSQLite or Postgres";
    signalled.duration_ms = 1500;
    CHECK(describe_event("PROJ-3", event(signalled)) ==
          "10:04:05 PROJ-3 #7 run-finished 0004 after 1.5s: INPUT_NEEDED: Which database?");

    CHECK(describe_event("PROJ-3",
                         event(VerdictGiven{Verdict::rejected, "Use the helper"},
                               Actor{ActorKind::human, "ana"})) ==
          "10:04:05 PROJ-3 #7 verdict rejected: Use the helper (by human:ana)");
    QuestionAsked q;
    q.question_id = "q2";
    q.question = "SQLite or Postgres?";
    CHECK(describe_event("PROJ-3", event(q)) ==
          "10:04:05 PROJ-3 #7 question PROJ-3.q2 (blocking): SQLite or Postgres?");
}

TEST_CASE("the JSON log format prints one JSON object per event, ticket first") {
    CapturedStdout out;
    {
        Reporter reporter(DaemonOptions::Output::json);
        reporter.event("PROJ-3", event(RunStarted{"0001", Status::research, 1, 1, {}, {}}));
        reporter.message("hello");
    }
    std::istringstream lines(out.text.str());
    std::string line;
    REQUIRE(std::getline(lines, line));
    const auto v = boost::json::parse(line).as_object();
    CHECK(v.begin()->key() == "ticket");
    CHECK(v.at("ticket") == "PROJ-3");
    CHECK(v.at("type") == "run-started");
    CHECK(v.at("seq") == 7);
    REQUIRE(std::getline(lines, line));
    CHECK(boost::json::parse(line).at("message") == "hello");
}

TEST_CASE("the summary says who awaits a human and what to type next") {
    auto waiting = std::make_shared<Ticket>();
    waiting->id = "PROJ-6";
    waiting->title = "Keep sessions";
    waiting->status = Status::research;
    waiting->awaiting = Awaiting::input;
    Question q;
    q.id = "q1";
    waiting->questions.push_back(q);
    auto plan = std::make_shared<Ticket>();
    plan->id = "PROJ-4";
    plan->status = Status::planning;
    plan->awaiting = Awaiting::approval;
    auto done = std::make_shared<Ticket>();
    done->id = "PROJ-1";
    done->status = Status::done;

    CapturedStdout out;
    Reporter(DaemonOptions::Output::text).summary(BoardSnapshot{{waiting, plan, done}, {}});
    const std::string text = out.text.str();
    CHECK(text.find("research 1 · ready 0 · planning 1") != std::string::npos);
    CHECK(text.find("done 1") != std::string::npos);
    CHECK(text.find("2 ticket(s) await a human") != std::string::npos);
    CHECK(text.find("board answer PROJ-6.q1") != std::string::npos);
    CHECK(text.find("board approve PROJ-4") != std::string::npos);
}

TEST_CASE("the summary names the tickets the board holds back and why") {
    auto held = std::make_shared<Ticket>();
    held->id = "PROJ-8";
    held->status = Status::ready;
    app::Standing standing{app::Standing::Kind::wip_held,
                           "wip 2/2",
                           "waits for room in planning: it holds 2 of 2 tickets (wip.planning)",
                           {},
                           0};
    CapturedStdout out;
    Reporter(DaemonOptions::Output::text)
        .summary(BoardSnapshot{{held}, {HeldTicket{"PROJ-8", standing}}});
    const std::string text = out.text.str();
    CHECK(text.find("1 ticket(s) held back by the board") != std::string::npos);
    CHECK(text.find("PROJ-8") != std::string::npos);
    CHECK(text.find("wip 2/2") != std::string::npos);
    CHECK(text.find("waits for room in planning") != std::string::npos);
}
