// Tests the daemon's own writes against KnownTickets: a refused write holds its ticket, and a
// ticket whose log is removed is forgotten.

#include "orchestrator/own_writes.hpp"

#include "orchestrator/known_tickets.hpp"
#include "orchestrator/reporter.hpp"
#include "support/temp_dir.hpp"

#include <board/app.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
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

struct WatchedBoard {
    explicit WatchedBoard(std::chrono::milliseconds debounce_for = 0ms)
        : debounce(debounce_for) {
        REQUIRE(app::init_board(root, "W"));
    }

    board::testing::TempDir dir{"board-own-writes-"};
    fs::path root = dir.path();
    Reporter reporter{DaemonOptions::Output::json};
    std::vector<std::string> changes;  ///< "id:known" or "id:gone", as KnownTickets reports them
    std::chrono::milliseconds debounce;
    KnownTickets known{root / "tickets",
                       reporter,
                       debounce,
                       [this](const std::string& id, const Ticket*, const Ticket* after) {
                           changes.push_back(id + (after ? ":known" : ":gone"));
                       },
                       [](const std::string&) {}};

    std::string create(const std::string& title) {
        app::Board writer{root};
        app::CreateRequest request;
        request.title = title;
        auto written = writer.create(request, Actor{ActorKind::human, "ana"});
        REQUIRE(written);
        return written.value().ticket.id;
    }

    /// A person's note, written past the daemon (it has not read it yet); the seq after it.
    std::int64_t person_notes(const std::string& id, const std::string& text) {
        app::Board writer{root};
        auto written = writer.note(id, text, app::NoteFrom::human, Actor{ActorKind::human, "ana"});
        REQUIRE(written);
        return written.value().ticket.seq;
    }
};

const app::Author system_note = [](const Ticket&) {
    NoteAdded added;
    added.text = "the daemon's note";
    return std::vector<app::Authored>{{Actor{ActorKind::system, {}}, added}};
};

/// The daemon's note as a write on its way (commit_on_disk, run to its end), with `around`.
OwnWrites::Written note_on_disk(OwnWrites& writes,
                                const std::string& id,
                                const OwnWrites::Around& around) {
    boost::asio::io_context io;
    OwnWrites::Written result;
    boost::asio::co_spawn(
        io,
        [&]() -> boost::asio::awaitable<void> {
            result = co_await writes.commit_on_disk(id, system_note, {}, false, false, around);
        },
        [](std::exception_ptr e) {
            if (e) std::rethrow_exception(e);
        });
    io.run();
    return result;
}

}  // namespace

TEST_CASE("a write the rules refuse holds its ticket for the retry time, a conflict does not",
          "[own_writes]") {
    WatchedBoard board;
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
    WatchedBoard board;
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

TEST_CASE(
    "a person's change the daemon's own write was built on holds the ticket for the "
    "debounce",
    "[own_writes]") {
    WatchedBoard board{30s};
    const std::string id = board.create("changed under the daemon");
    board.known.scan();
    REQUIRE(board.known.all().at(id).available_at <= KnownTickets::Clock::now());
    OwnWrites writes{board.root, board.known, board.reporter, 10s};

    // The daemon's own write alone holds nothing.
    REQUIRE(writes.commit(id, system_note));
    CHECK(board.known.all().at(id).available_at <= KnownTickets::Clock::now());

    // A person's note lands before the daemon has read it; the daemon's next write folds it in.
    const auto before = KnownTickets::Clock::now();
    const std::int64_t person_seq = board.person_notes(id, "a person's note");
    const auto written = writes.commit(id, system_note);
    REQUIRE(written);
    CHECK((*written)->seq == person_seq + 1);
    CHECK(board.known.all().at(id).available_at >= before + 30s);
}

TEST_CASE("a person's change read while the daemon's write was on its way is kept, and debounced",
          "[own_writes]") {
    WatchedBoard board{30s};
    const std::string id = board.create("changed while writing");
    board.known.scan();
    OwnWrites writes{board.root, board.known, board.reporter, 10s};
    std::int64_t person_seq = -1;
    OwnWrites::Around around;
    // Right after the daemon's write is durable, a person writes, and the watcher's reload
    // (on the io thread, while the write is still on its way back) reads it.
    around.after = [&](const Ticket&) {
        person_seq = board.person_notes(id, "right after the daemon");
        board.known.reload(id, true);
    };
    const auto before = KnownTickets::Clock::now();
    const OwnWrites::Written result = note_on_disk(writes, id, around);
    REQUIRE(result);
    REQUIRE(person_seq > 0);
    CHECK((*result)->seq == person_seq - 1);
    // What is known is the newer log, not the older ticket the write made.
    REQUIRE(board.known.all().at(id).ticket);
    CHECK(board.known.all().at(id).ticket->seq == person_seq);
    CHECK(board.known.all().at(id).available_at >= before + 30s);
}

TEST_CASE("two writes of the daemon's own to one ticket at once are not taken for a person's",
          "[own_writes]") {
    WatchedBoard board{30s};
    const std::string id = board.create("two own writes");
    board.known.scan();
    OwnWrites writes{board.root, board.known, board.reporter, 10s};
    // A question timeout written on the io thread while a run's write is on its way.
    OwnWrites::Around around;
    std::int64_t second_seq = -1;
    around.after = [&](const Ticket&) {
        const auto second = writes.commit(id, system_note);
        REQUIRE(second);
        second_seq = (*second)->seq;
    };
    const OwnWrites::Written first = note_on_disk(writes, id, around);
    REQUIRE(first);
    CHECK(second_seq == (*first)->seq + 1);
    CHECK(board.known.all().at(id).ticket->seq == second_seq);
    CHECK(board.known.all().at(id).available_at <= KnownTickets::Clock::now());
}

TEST_CASE(
    "an older log copied over the ticket while the daemon's write is on its way is what "
    "is known, and debounced",
    "[own_writes]") {
    WatchedBoard board{30s};
    const std::string id = board.create("rewound");
    const fs::path log = board.root / "tickets" / id / "events.jsonl";
    const fs::path older = board.root / "older.jsonl";
    fs::copy_file(log, older);
    board.person_notes(id, "one");
    board.person_notes(id, "two");
    board.known.scan();
    OwnWrites writes{board.root, board.known, board.reporter, 10s};
    OwnWrites::Around around;
    // A `git checkout` of an older log, read by the watcher while the write is on its way.
    around.after = [&](const Ticket&) {
        fs::copy_file(older, log, fs::copy_options::overwrite_existing);
        board.known.reload(id, true);
    };
    const auto before = KnownTickets::Clock::now();
    const OwnWrites::Written result = note_on_disk(writes, id, around);
    REQUIRE(result);
    CHECK((*result)->seq == 4);
    REQUIRE(board.known.all().at(id).ticket);
    CHECK(board.known.all().at(id).ticket->seq == 1);
    CHECK(board.known.all().at(id).available_at >= before + 30s);
}
