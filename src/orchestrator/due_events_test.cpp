// Tests the events the system owes a ticket at a time: a question past its timeout is timed
// out, and one whose append is refused waits for the retry time instead of being tried at
// every turn of the daemon's loop.

#include "orchestrator/due_events.hpp"

#include "orchestrator/known_tickets.hpp"
#include "orchestrator/own_writes.hpp"
#include "orchestrator/reporter.hpp"
#include "support/temp_dir.hpp"

#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace board;
using namespace board::orchestrator;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

/// A ticket whose blocking question was asked two hours ago (its timeout is 30 minutes).
void write_asked_long_ago(const fs::path& dir) {
    fs::create_directories(dir);
    const UnixMillis long_ago = wall_clock_now() - 2 * 3'600'000;
    Created created;
    created.ticket = "W-1";
    created.title = "asks";
    QuestionAsked asked;
    asked.question_id = "q1";
    asked.question = "Which one?";
    std::ofstream log{dir / "events.jsonl", std::ios::binary};
    log << encode_event(Event{
               event_schema_version, 1, "e1", long_ago, Actor{ActorKind::human, "ana"}, created})
        << '\n'
        << encode_event(Event{event_schema_version,
                              2,
                              "e2",
                              long_ago + 1,
                              Actor{ActorKind::agent, "research"},
                              asked})
        << '\n';
}

/// std::cerr into `to` while it lives.
struct StderrTo {
    explicit StderrTo(std::ostream& to)
        : kept(std::cerr.rdbuf(to.rdbuf())) {}

    ~StderrTo() { std::cerr.rdbuf(kept); }

    StderrTo(const StderrTo&) = delete;
    StderrTo& operator=(const StderrTo&) = delete;
    std::streambuf* kept;
};

}  // namespace

TEST_CASE("a question past its timeout is timed out, and a refused one waits for the retry time",
          "[due_events]") {
    board::testing::TempDir dir{"board-due-events-"};
    const fs::path root = dir.path();
    REQUIRE(app::init_board(root, "W"));
    Reporter reporter{DaemonOptions::Output::json};
    Policy policy;
    std::unique_ptr<DueEvents> due;
    KnownTickets known{root / "tickets",
                       reporter,
                       0ms,
                       [&](const std::string& id, const Ticket*, const Ticket* after) {
                           due->ticket_changed(id, after);
                       },
                       [](const std::string&) {}};
    OwnWrites writes{root, known, reporter, 10s};
    due = std::make_unique<DueEvents>(known, writes, policy);

    SECTION("timed out at once") {
        write_asked_long_ago(root / "tickets" / "W-1");
        known.scan();
        REQUIRE(known.all().at("W-1").ticket);
        CHECK_FALSE(due->commit_due());  // nothing else is owed
        const auto loaded = load_ticket(root / "tickets" / "W-1");
        REQUIRE(std::holds_alternative<Loaded>(loaded));
        CHECK(std::get<Loaded>(loaded).ticket.questions.at(0).status == QuestionStatus::timed_out);
    }
    SECTION("refused: tried again after the retry time, not at once") {
        write_asked_long_ago(root / "tickets" / "W-1");
        known.scan();
        REQUIRE(known.all().at("W-1").ticket);
        // The log becomes unwritable: a folder where the file was (the disk refuses).
        const fs::path log = root / "tickets" / "W-1" / "events.jsonl";
        fs::rename(log, root / "kept.jsonl");
        fs::create_directories(log);
        // What the daemon says goes to stderr: each refused write says so once.
        std::ostringstream said;
        const StderrTo redirected{said};
        const UnixMillis before = wall_clock_now();
        const auto first = due->commit_due();
        REQUIRE(first);
        // Not the deadline just missed (two hours ago): the end of the hold.
        CHECK(*first >= before + 9'000);
        CHECK(*first <= wall_clock_now() + 10'000);
        // Asked again at once, it does not write again: the same time comes back.
        const auto again = due->commit_due();
        REQUIRE(again);
        CHECK(*again <= *first + 100);
        CHECK(*again >= *first - 100);
        const std::string problems = said.str();
        CHECK(std::count(problems.begin(), problems.end(), '\n') == 1);
        CHECK(problems.find("events.jsonl") != std::string::npos);
    }
}
