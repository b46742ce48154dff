// Tests loading a board from disk through the tickets/.index cache, and the index line format.

#include "catalog/catalog_test_support.hpp"
#include "catalog/index_file.hpp"
#include "support/file_clock.hpp"

#include <board/catalog.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace board;
using namespace board::catalog_test;

TEST_CASE("an index line reads back exactly, escapes included", "[catalog][index]") {
    Ticket t = make("WEB-12", 1, 1'700'000'000'123);
    t.title = "tabs\tnewlines\nback\\slash, commas";
    t.labels = {"a,b", "c\\d"};
    t.parent = "WEB-1";
    t.blocked_by = {"WEB-2", "WEB-3"};
    t.status = Status::implementing;
    t.awaiting = Awaiting::checkpoint;
    t.handoff = Handoff::gate;
    t.requires_ = Awaiting::review;
    t.run = running(Status::implementing);
    t.run->started_at = 42;
    t.phase_attempts = 2;
    t.last_failure_at = 7;
    t.cost_usd = 0.1 + 0.2;
    t.runs_total = 3;
    t.seq = 19;
    // What next_action() and a standing read of a done ticket: the branch it ships.
    t.branch = "board/WEB-12";
    t.ship_owed = true;
    catalog_index::IndexLine line{{11, 2048, 123456789}, summarize(t)};
    CHECK(line.entry.ticket.ship_owed);
    CHECK(line.entry.ticket.branch == "board/WEB-12");
    line.entry.questions_pending = 1;
    line.entry.questions_total = 2;
    std::string text;
    catalog_index::append_line(text, line);
    REQUIRE(text.back() == '\n');
    CHECK(std::count(text.begin(), text.end(), '\n') == 1);
    text.pop_back();
    const auto back = catalog_index::parse_line(text);
    REQUIRE(back.has_value());
    CHECK(back->log == line.log);
    CHECK(back->entry == line.entry);
    CHECK_FALSE(catalog_index::parse_line(text.substr(0, text.size() / 2)).has_value());
    CHECK_FALSE(catalog_index::parse_line("").has_value());
}

// ---------------------------------------------------------------------------------------------
// Loading from disk

namespace {

struct TempBoard {
    fs::path root =
        fs::temp_directory_path() /
        ("board-catalog-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    static inline int counter = 0;

    TempBoard() { fs::create_directories(root / "tickets"); }

    ~TempBoard() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }

    TempBoard(const TempBoard&) = delete;
    TempBoard& operator=(const TempBoard&) = delete;

    fs::path dir(const std::string& id) const { return root / "tickets" / id; }

    void create(const std::string& id, const std::string& title) const {
        fs::create_directories(dir(id));
        Created created;
        created.ticket = id;
        created.title = title;
        commit(id, created);
    }

    void commit(const std::string& id, Payload payload) const {
        const auto result = transact(dir(id), Actor{ActorKind::human, "ana"}, [&](const Ticket&) {
            return std::vector<Payload>{payload};
        });
        REQUIRE(std::holds_alternative<Committed>(result));
    }
};

CatalogLoad load_ok(const TempBoard& board) {
    auto result = load_catalog(board.root);
    REQUIRE(std::holds_alternative<CatalogLoad>(result));
    return std::move(std::get<CatalogLoad>(result));
}

std::string read_text(const fs::path& file) {
    std::ifstream in{file, std::ios::binary};
    return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

/// Replaces `file`'s content in place (same inode), as an editor saving over it may.
void overwrite_in_place(const fs::path& file, const std::string& text) {
    std::ofstream out{file, std::ios::binary | std::ios::in | std::ios::out};
    out.seekp(0);
    out << text;
}

}  // namespace

TEST_CASE("load builds the index once and then trusts it only while the log is unchanged",
          "[catalog][load]") {
    TempBoard board;
    board.create("P-1", "first");
    board.create("P-2", "second");
    testing::let_the_file_clock_tick();

    auto first = load_ok(board);
    CHECK(first.rebuilt == 2);
    CHECK(first.catalog.entries().size() == 2);
    CHECK(fs::exists(board.root / "tickets" / ".index"));

    auto second = load_ok(board);
    CHECK(second.rebuilt == 0);
    CHECK(second.catalog.find("P-2")->ticket.title == "second");

    board.commit("P-2", NoteAdded{"a note the index has not seen"});
    auto third = load_ok(board);
    CHECK(third.rebuilt == 1);
    CHECK(third.catalog.find("P-2")->notes == 1);
    CHECK(third.catalog.find("P-2")->ticket.seq == 2);

    SECTION("a deleted index is rebuilt from the logs") {
        fs::remove(board.root / "tickets" / ".index");
        auto again = load_ok(board);
        CHECK(again.rebuilt == 2);
        CHECK(again.catalog.find("P-2")->notes == 1);
    }
    SECTION("a snapshot is never believed, even one at the log's seq") {
        Ticket edited;
        static_cast<TicketSummary&>(edited) = third.catalog.find("P-2")->ticket;
        edited.title = "edited by hand";
        edited.status = Status::done;
        REQUIRE_FALSE(write_snapshot(board.dir("P-2"), edited).has_value());
        fs::remove(board.root / "tickets" / ".index");
        auto again = load_ok(board);
        CHECK(again.catalog.find("P-2")->ticket.title == "second");
        CHECK(again.catalog.find("P-2")->ticket.status == Status::backlog);
        CHECK(again.catalog.find("P-2")->notes == 1);
    }
    SECTION("an index of another version, or garbage, is rebuilt whole") {
        const std::string garbage[] = {"board-index 2\t1 - x\nnot\ta\tline\n",
                                       "board-index 3\tnot-a-number\n",
                                       "board-index 3\t",
                                       ""};
        for (const auto& text : garbage) {
            std::ofstream{board.root / "tickets" / ".index", std::ios::trunc} << text;
            auto again = load_ok(board);
            CHECK(again.rebuilt == 2);
            CHECK(again.catalog.entries().size() == 2);
        }
    }
}

TEST_CASE("a log changed by anything but a board writer shows in the very next load",
          "[catalog][load]") {
    TempBoard board;
    board.create("P-1", "first");
    board.create("P-2", "second");
    REQUIRE(load_ok(board).catalog.entries().size() == 2);
    const fs::path log = board.dir("P-2") / "events.jsonl";

    SECTION("a valid event appended with a plain file write") {
        TempBoard other;
        other.create("P-2", "second");
        other.commit("P-2", NoteAdded{"written elsewhere"});
        const std::string text = read_text(other.dir("P-2") / "events.jsonl");
        const auto second_line = text.substr(text.find('\n') + 1);
        // The same first event (ids differ), so append only the note line after ours.
        std::ofstream{log, std::ios::app | std::ios::binary} << second_line;
        const auto load = load_ok(board);
        CHECK(load.catalog.find("P-2")->notes == 1);
    }
    SECTION("a log replaced by a copy from another board") {
        TempBoard other;
        other.create("P-2", "the other board's title");
        fs::copy_file(other.dir("P-2") / "events.jsonl", log, fs::copy_options::overwrite_existing);
        CHECK(load_ok(board).catalog.find("P-2")->ticket.title == "the other board's title");
    }
    SECTION("an edit in place that keeps the size, however soon after the index was made") {
        std::string text = read_text(log);
        const auto at = text.find("second");
        REQUIRE(at != std::string::npos);
        text.replace(at, 6, "SECOND");
        overwrite_in_place(log, text);
        CHECK(load_ok(board).catalog.find("P-2")->ticket.title == "SECOND");
    }
    SECTION("an edit that puts the mtime back (cp -p, rsync -t) is still seen") {
        const auto mtime = fs::last_write_time(log);
        testing::let_the_file_clock_tick();
        std::string text = read_text(log);
        text.replace(text.find("second"), 6, "sEcOnD");
        overwrite_in_place(log, text);
        fs::last_write_time(log, mtime);
        CHECK(load_ok(board).catalog.find("P-2")->ticket.title == "sEcOnD");
    }
    SECTION("a removed ticket folder drops out at once") {
        fs::remove_all(board.dir("P-1"));
        const auto load = load_ok(board);
        CHECK_FALSE(load.catalog.find("P-1"));
        CHECK(load.catalog.entries().size() == 1);
    }
}

TEST_CASE("tickets the index does not know are found, gone ones drop out", "[catalog][load]") {
    TempBoard board;
    board.create("P-1", "first");
    board.create("P-2", "second");
    fs::create_directories(board.dir("P-3"));  // a create in progress: no log yet
    testing::let_the_file_clock_tick();
    REQUIRE(load_ok(board).catalog.entries().size() == 2);

    SECTION("a ticket created after the index was written") {
        board.create("P-4", "fourth");
        const auto load = load_ok(board);
        CHECK(load.rebuilt == 1);
        REQUIRE(load.catalog.find("P-4"));
        CHECK(load.catalog.find("P-4")->ticket.title == "fourth");
    }
    SECTION("a folder that had no log gets one") {
        board.create("P-3", "third");
        const auto load = load_ok(board);
        REQUIRE(load.catalog.find("P-3"));
        CHECK(load.catalog.entries().size() == 3);
    }
    SECTION("a removed ticket folder and a new one") {
        fs::remove_all(board.dir("P-1"));
        board.create("P-5", "fifth");
        const auto load = load_ok(board);
        CHECK_FALSE(load.catalog.find("P-1"));
        REQUIRE(load.catalog.find("P-5"));
        CHECK(load.catalog.entries().size() == 2);
        testing::let_the_file_clock_tick();
        (void)load_ok(board);
        CHECK(load_ok(board).rebuilt == 0);  // and the index says so now
    }
}

TEST_CASE("a big board's logs are checked on two threads, each log still against its line",
          "[catalog][load]") {
    // On a big board (an index of more than about 200 KB) the lines are parsed on one thread
    // while their logs are statted on another: a change anywhere must be seen, and a line that does
    // not parse must be folded though its log was statted. Logs are copies of one (no fsync each),
    // renamed per ticket.
    TempBoard board;
    board.create("P-1", "one of many");
    std::string line;
    {
        std::ifstream in{board.dir("P-1") / "events.jsonl"};
        std::getline(in, line);
    }
    const std::string own = "\"P-1\"";
    REQUIRE(line.find(own) != std::string::npos);
    constexpr int tickets = 2100;
    for (int n = 2; n <= tickets; ++n) {
        const std::string id = "P-" + std::to_string(n);
        std::string copy = line;
        copy.replace(copy.find(own), own.size(), "\"" + id + "\"");
        fs::create_directories(board.dir(id));
        std::ofstream{board.dir(id) / "events.jsonl"} << copy << '\n';
    }
    testing::let_the_file_clock_tick();
    REQUIRE(load_ok(board).catalog.entries().size() == tickets);
    CHECK(load_ok(board).rebuilt == 0);

    board.commit("P-10", NoteAdded{"first half"});
    board.commit("P-2090", NoteAdded{"second half"});
    const auto load = load_ok(board);
    CHECK(load.rebuilt == 2);
    CHECK(load.catalog.find("P-10")->notes == 1);
    CHECK(load.catalog.find("P-2090")->notes == 1);
    CHECK(load.catalog.entries().size() == tickets);

    // P-1500's line made malformed in place: its log's stat still matches, its line is gone.
    // (First a load a tick later: the two logs just written may have changed in the tick of
    // the last load's check, and such lines are folded again until a later load checks them.)
    testing::let_the_file_clock_tick();
    (void)load_ok(board);
    const fs::path index = board.root / "tickets" / ".index";
    std::string text;
    {
        std::ifstream in{index};
        text.assign(std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{});
    }
    const auto at = text.find("\nP-1500\t");
    REQUIRE(at != std::string::npos);
    const auto field = text.find('\t', at + 1) + 1;
    text.replace(field, text.find('\t', field) - field, "not-a-number");
    std::ofstream{index, std::ios::trunc} << text;
    const auto mended = load_ok(board);
    CHECK(mended.rebuilt == 1);
    CHECK(mended.catalog.find("P-1500") != nullptr);
    CHECK(mended.catalog.entries().size() == tickets);
}

TEST_CASE("an index with lines out of order or repeated never yields a ticket twice",
          "[catalog][load]") {
    TempBoard board;
    board.create("P-1", "first");
    board.create("P-2", "second");
    REQUIRE(load_ok(board).catalog.entries().size() == 2);
    const fs::path index = board.root / "tickets" / ".index";
    std::string text;
    {
        std::ifstream in{index};
        text.assign(std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{});
    }
    const auto first_line_end = text.find('\n');
    const auto second_line_end = text.find('\n', first_line_end + 1);
    const std::string p1 = text.substr(first_line_end + 1, second_line_end - first_line_end);
    const std::string p2 = text.substr(second_line_end + 1);
    const std::string header = text.substr(0, first_line_end + 1);
    std::ofstream{index, std::ios::trunc} << header << p2 << p1 << p1 << p2;

    const auto load = load_ok(board);
    REQUIRE(load.catalog.entries().size() == 2);
    CHECK(load.catalog.entries()[0].ticket.id == "P-1");
    CHECK(load.catalog.entries()[1].ticket.id == "P-2");
}

TEST_CASE("a corrupt log leaves its ticket out with a warning, the rest still loads",
          "[catalog][load]") {
    TempBoard board;
    board.create("P-1", "fine");
    fs::create_directories(board.dir("P-2"));
    std::ofstream{board.dir("P-2") / "events.jsonl"} << "{not json}\n{\"v\":1}\n";
    fs::create_directories(board.dir("P-3"));  // claimed by a create in progress: no log yet

    const auto load = load_ok(board);
    CHECK(load.catalog.entries().size() == 1);
    REQUIRE(load.warnings.size() == 1);
    CHECK_THAT(load.warnings.front(), Catch::Contains("P-2 left out"));
}

TEST_CASE("a board without tickets/ is an error naming the folder", "[catalog][load]") {
    const auto result = load_catalog(fs::temp_directory_path() / "no-such-board-here");
    REQUIRE(std::holds_alternative<CatalogError>(result));
    CHECK_THAT(std::get<CatalogError>(result).message, Catch::Contains("no-such-board-here"));
}
