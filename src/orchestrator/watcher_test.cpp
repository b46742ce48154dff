// Tests the daemon's watch on the board: the tickets a change names, a folder made again, and
// notifications the kernel dropped.

#include "orchestrator/watcher.hpp"

#include "support/temp_dir.hpp"

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

using board::orchestrator::BoardWatcher;
namespace fs = std::filesystem;

namespace {

struct Watched {
    board::testing::TempDir dir{"board-watcher-"};
    fs::path tickets = dir.path() / "tickets";
    boost::asio::io_context io;
    std::vector<std::string> problems;
    BoardWatcher watcher{
        io, tickets, [] {}, [this](const std::string& p) { problems.push_back(p); }};

    Watched() {
        fs::create_directories(tickets / "W-1");
        REQUIRE_FALSE(watcher.start());
        watcher.watch("W-1");
    }

    void append(const fs::path& file) { std::ofstream{file, std::ios::app} << "x\n"; }
};

int max_queued_events() {
    std::ifstream in{"/proc/sys/fs/inotify/max_queued_events"};
    int n = 16384;
    in >> n;
    return n;
}

}  // namespace

TEST_CASE("a change to a ticket's log names the ticket, other files in its folder do not",
          "[watcher]") {
    Watched w;
    w.append(w.tickets / "W-1" / "notes.txt");
    w.watcher.drain();
    CHECK_FALSE(w.watcher.has_changed());
    w.append(w.tickets / "W-1" / "events.jsonl");
    w.watcher.drain();
    CHECK(w.watcher.take_changed() == std::set<std::string>{"W-1"});
    // A folder that is not there is not a folder that cannot be watched: it is watched when
    // it is made.
    w.watcher.watch("W-9");
    CHECK(w.watcher.unwatched().empty());
    CHECK(w.problems.empty());
}

TEST_CASE("a log is named when its writer closes it, not at each write before", "[watcher]") {
    Watched w;
    w.append(w.tickets / "W-1" / "events.jsonl");
    w.watcher.drain();
    REQUIRE(w.watcher.take_changed() == std::set<std::string>{"W-1"});
    {
        std::ofstream log{w.tickets / "W-1" / "events.jsonl", std::ios::app};
        log << "a line\n" << std::flush;
        log << "another\n" << std::flush;
        w.watcher.drain();
        // Read now, the daemon could meet a batch half written and not yet on disk.
        CHECK_FALSE(w.watcher.has_changed());
    }
    w.watcher.drain();
    CHECK(w.watcher.take_changed() == std::set<std::string>{"W-1"});
    w.watcher.drain();
    CHECK_FALSE(w.watcher.has_changed());  // one write, one read
}

TEST_CASE("a ticket folder removed and made again is watched again", "[watcher]") {
    Watched w;
    fs::remove_all(w.tickets / "W-1");
    w.watcher.drain();
    CHECK(w.watcher.take_changed() == std::set<std::string>{"W-1"});
    fs::create_directories(w.tickets / "W-1");
    w.watcher.drain();
    CHECK(w.watcher.take_changed() == std::set<std::string>{"W-1"});
    w.append(w.tickets / "W-1" / "events.jsonl");
    w.watcher.drain();
    CHECK(w.watcher.take_changed() == std::set<std::string>{"W-1"});
}

TEST_CASE("notifications the kernel dropped are said, so that every log is looked at again",
          "[watcher]") {
    Watched w;
    // Two files in turn: the kernel merges only an event identical to the last one queued.
    const int writes = max_queued_events() + 100;
    for (int i = 0; i < writes; ++i)
        w.append(w.tickets / "W-1" / (i % 2 == 0 ? "events.jsonl" : "notes.txt"));
    w.watcher.drain();
    CHECK(w.watcher.has_changed());
    CHECK(w.watcher.take_overflow());
    CHECK_FALSE(w.watcher.take_overflow());
    REQUIRE(w.problems.size() == 1);
    CHECK(w.problems[0].find("dropped notifications") != std::string::npos);
}
