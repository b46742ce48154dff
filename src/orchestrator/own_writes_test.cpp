// Tests the daemon's own writes against KnownTickets: a refused write holds its ticket, and a
// ticket whose log is removed is forgotten.

#include "orchestrator/own_writes.hpp"

#include "orchestrator/known_tickets.hpp"
#include "orchestrator/reporter.hpp"
#include "support/temp_dir.hpp"

#include <board/app.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

using namespace board;
using namespace board::orchestrator;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct Board {
    board::testing::TempDir dir{"board-own-writes-"};
    fs::path root = dir.path();
    Reporter reporter{DaemonOptions::Output::json};
    std::vector<std::string> changes;  ///< "id:known" or "id:gone", as KnownTickets reports them
    KnownTickets known{root / "tickets",
                       reporter,
                       0ms,
                       [this](const std::string& id, const Ticket*, const Ticket* after) {
                           changes.push_back(id + (after ? ":known" : ":gone"));
                       },
                       [](const std::string&) {}};

    Board() { REQUIRE(app::init_board(root, "W")); }

    std::string create(const std::string& title) {
        app::Board writer{root};
        app::CreateRequest request;
        request.title = title;
        auto written = writer.create(request, Actor{ActorKind::human, "ana"});
        REQUIRE(written);
        return written.value().ticket.id;
    }
};

}  // namespace

TEST_CASE("a write the rules refuse holds its ticket for the retry time, a conflict does not",
          "[own_writes]") {
    Board board;
    const std::string id = board.create("refused");
    board.known.scan();
    OwnWrites writes{board.root, board.known, board.reporter, 10s};
    const auto before = KnownTickets::Clock::now();
    // A run's end for a run that never started: the reducer refuses it.
    const app::Author finish_nothing = [](const Ticket&) {
        RunFinished finished;
        finished.run = "0042";
        return std::vector<app::Authored>{{Actor{ActorKind::system, {}}, finished}};
    };
    CHECK_FALSE(writes.commit(id, finish_nothing));
    const auto held_until = board.known.all().at(id).available_at;
    CHECK(held_until >= before + 10s);
    CHECK(held_until <= KnownTickets::Clock::now() + 10s);

    // A conflict (the ticket moved on since the caller decided) is planned again at once.
    const std::string other = board.create("moved on");
    board.known.scan();
    const auto other_before = board.known.all().at(other).available_at;
    const app::Author note = [](const Ticket&) {
        NoteAdded added;
        added.text = "a note";
        return std::vector<app::Authored>{{Actor{ActorKind::system, {}}, added}};
    };
    CHECK_FALSE(writes.commit(other, note, /*expected_seq=*/99));
    CHECK(board.known.all().at(other).available_at == other_before);
}

TEST_CASE("a ticket whose log is removed is forgotten, one not written yet is no change",
          "[own_writes]") {
    Board board;
    const std::string id = board.create("to be removed");
    board.known.scan();
    REQUIRE(board.known.all().at(id).ticket);
    fs::remove_all(board.root / "tickets" / id);
    board.changes.clear();
    board.known.reload(id, true);
    CHECK_FALSE(board.known.all().at(id).ticket);
    CHECK(board.changes == std::vector<std::string>{id + ":gone"});

    // A folder whose log is not there yet (a ticket being created) is no change.
    fs::create_directories(board.root / "tickets" / "W-77");
    board.changes.clear();
    board.known.reload("W-77", true);
    CHECK_FALSE(board.known.all().at("W-77").ticket);
    CHECK(board.changes.empty());
}
