// The catalog: §7 queries over tickets in memory, and loading a board through its caches.

#include "catalog/index_file.hpp"
#include "support/file_clock.hpp"

#include <board/catalog.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace board;

namespace {

Ticket make(std::string id, int priority = 2, UnixMillis created_at = 0) {
    Ticket t;
    t.id = std::move(id);
    t.title = "ticket " + t.id;
    t.priority = priority;
    t.created_at = created_at;
    t.status = Status::backlog;
    return t;
}

Catalog catalog_of(std::vector<Ticket> tickets) {
    std::vector<CatalogEntry> entries;
    for (const auto& t : tickets) entries.push_back(summarize(t));
    return Catalog{std::move(entries)};
}

std::vector<std::string> ids(const std::vector<const CatalogEntry*>& entries) {
    std::vector<std::string> out;
    for (const auto* e : entries) out.push_back(e->ticket.id);
    return out;
}

Run running(Status phase) {
    Run run;
    run.id = "r1";
    run.phase = phase;
    return run;
}

}  // namespace

TEST_CASE("next order: priority, then epic momentum, other epics, standalone, orphans",
          "[catalog][order]") {
    Ticket busy_epic = make("P-1");
    busy_epic.type = TicketType::epic;
    Ticket quiet_epic = make("P-2");
    quiet_epic.type = TicketType::epic;
    Ticket done_epic = make("P-3");
    done_epic.type = TicketType::epic;
    done_epic.status = Status::done;
    done_epic.resolution = Resolution::wont_do;

    Ticket in_flight = make("P-10", 2, 1);  // gives P-1 its momentum
    in_flight.parent = "P-1";
    in_flight.status = Status::research;
    in_flight.run = running(Status::research);
    Ticket momentum = make("P-11", 2, 50);
    momentum.parent = "P-1";
    Ticket other_epic = make("P-12", 2, 10);
    other_epic.parent = "P-2";
    Ticket standalone = make("P-13", 2, 5);
    Ticket orphan = make("P-14", 2, 1);
    orphan.parent = "P-3";
    Ticket urgent_orphan = make("P-15", 0, 99);
    urgent_orphan.parent = "P-3";

    const auto catalog = catalog_of({busy_epic,
                                     quiet_epic,
                                     done_epic,
                                     in_flight,
                                     momentum,
                                     other_epic,
                                     standalone,
                                     orphan,
                                     urgent_orphan});
    CHECK(ids(catalog.ready(Policy{}, {})) ==
          std::vector<std::string>{"P-15", "P-11", "P-12", "P-13", "P-14"});
    REQUIRE(catalog.next_for_agent(Policy{}, {}) != nullptr);
    CHECK(catalog.next_for_agent(Policy{}, {})->ticket.id == "P-15");

    NextFilter only_epic;
    only_epic.epic = "P-2";
    CHECK(ids(catalog.ready(Policy{}, only_epic)) == std::vector<std::string>{"P-12"});
    NextFilter standalone_only;
    standalone_only.standalone = true;
    CHECK(ids(catalog.ready(Policy{}, standalone_only)) == std::vector<std::string>{"P-13"});
    NextFilter orphans;
    orphans.orphan = true;
    CHECK(ids(catalog.ready(Policy{}, orphans)) == std::vector<std::string>{"P-15", "P-14"});
}

TEST_CASE("the agent never gets done, awaiting, running, blocked, epic or disallowed work",
          "[catalog][next]") {
    Ticket done = make("P-1");
    done.status = Status::done;
    Ticket awaiting = make("P-2");
    awaiting.status = Status::review;
    awaiting.awaiting = Awaiting::review;
    Ticket running_one = make("P-3");
    running_one.status = Status::implementing;
    running_one.run = running(Status::implementing);
    Ticket blocked = make("P-4");
    blocked.blocked_by = {"P-5"};
    Ticket blocker = make("P-5", 3);
    Ticket epic = make("P-6", 0);
    epic.type = TicketType::epic;
    Ticket ready_column = make("P-7", 0);  // auto.planning is off by default
    ready_column.status = Status::ready;
    Ticket unknown_blocker = make("P-8", 0);
    unknown_blocker.blocked_by = {"P-99"};
    const auto catalog = catalog_of(
        {done, awaiting, running_one, blocked, blocker, epic, ready_column, unknown_blocker});
    CHECK(ids(catalog.ready(Policy{}, {})) == std::vector<std::string>{"P-5"});

    Policy planning_on;
    planning_on.auto_planning = true;
    CHECK(ids(catalog.ready(planning_on, {})) == std::vector<std::string>{"P-7", "P-5"});

    SECTION("a done blocker releases the ticket") {
        blocker.status = Status::done;
        const auto released = catalog_of({blocked, blocker});
        CHECK(ids(released.ready(Policy{}, {})) == std::vector<std::string>{"P-4"});
    }
    SECTION("WIP: research holds 3 by default; a fourth backlog ticket waits") {
        std::vector<Ticket> tickets;
        for (int i = 1; i <= 3; ++i) {
            Ticket t = make("W-" + std::to_string(i));
            t.status = Status::research;
            t.run = running(Status::research);
            tickets.push_back(t);
        }
        tickets.push_back(make("W-4"));
        CHECK(catalog_of(tickets).ready(Policy{}, {}).empty());
    }
}

TEST_CASE("the human side: any status, optionally of some awaiting types, same order",
          "[catalog][next][human]") {
    Ticket review = make("P-1", 2, 5);
    review.status = Status::review;
    review.awaiting = Awaiting::review;
    Ticket input = make("P-2", 1, 9);
    input.status = Status::implementing;  // handed off mid-phase: tk's `next` missed these
    input.awaiting = Awaiting::input;
    Ticket work = make("P-3", 3);
    work.awaiting = Awaiting::work;
    Ticket agent_turn = make("P-4", 0);
    const auto catalog = catalog_of({review, input, work, agent_turn});

    REQUIRE(catalog.next_for_human({}, {}) != nullptr);
    CHECK(catalog.next_for_human({}, {})->ticket.id == "P-2");
    const std::vector<Awaiting> review_only{Awaiting::review, Awaiting::work};
    CHECK(catalog.next_for_human(review_only, {})->ticket.id == "P-1");
    CHECK(ids(catalog.awaiting_human({}, {})) == std::vector<std::string>{"P-2", "P-1", "P-3"});
    const std::vector<Awaiting> escalations{Awaiting::escalation};
    CHECK(catalog.next_for_human(escalations, {}) == nullptr);
}

TEST_CASE("list filters, and done tickets only when asked for", "[catalog][list]") {
    Ticket epic = make("P-1");
    epic.type = TicketType::epic;
    Ticket child = make("P-2");
    child.parent = "P-1";
    child.labels = {"backend", "api"};
    Ticket done_child = make("P-3");
    done_child.parent = "P-1";
    done_child.status = Status::done;
    Ticket waiting = make("P-4");
    waiting.awaiting = Awaiting::approval;
    waiting.labels = {"backend"};
    const auto catalog = catalog_of({epic, child, done_child, waiting});

    CHECK(ids(catalog.list({})) == std::vector<std::string>{"P-2", "P-1", "P-4"});
    ListFilter all;
    all.all = true;
    CHECK(catalog.list(all).size() == 4);
    ListFilter done;
    done.statuses = {Status::done};
    CHECK(ids(catalog.list(done)) == std::vector<std::string>{"P-3"});
    ListFilter children;
    children.parent = "P-1";
    CHECK(ids(catalog.list(children)) == std::vector<std::string>{"P-2"});
    ListFilter standalone;
    standalone.standalone = true;
    CHECK(ids(catalog.list(standalone)) == std::vector<std::string>{"P-1", "P-4"});
    ListFilter awaiting;
    awaiting.awaiting_any = true;
    CHECK(ids(catalog.list(awaiting)) == std::vector<std::string>{"P-4"});
    awaiting.awaiting = {Awaiting::input};
    CHECK(catalog.list(awaiting).empty());
    ListFilter labelled;
    labelled.labels = {"backend", "api"};
    CHECK(ids(catalog.list(labelled)) == std::vector<std::string>{"P-2"});
}

TEST_CASE("an epic is done when all its children are, derived not stored", "[catalog][epic]") {
    Ticket epic = make("P-1");
    epic.type = TicketType::epic;
    Ticket a = make("P-2");
    a.parent = "P-1";
    a.status = Status::done;
    Ticket b = make("P-3");
    b.parent = "P-1";
    Ticket orphan_to_be = make("P-4");
    orphan_to_be.parent = "P-1";
    orphan_to_be.status = Status::done;

    const auto open = catalog_of({epic, a, b});
    CHECK(open.epic_progress("P-1").children == 2);
    CHECK(open.epic_progress("P-1").done == 1);
    CHECK_FALSE(open.epic_progress("P-1").complete);
    CHECK(open.shown_status(open.find("P-1")->ticket) == Status::backlog);

    b.status = Status::done;
    const auto complete = catalog_of({epic, a, b});
    CHECK(complete.epic_progress("P-1").complete);
    CHECK(complete.shown_status(complete.find("P-1")->ticket) == Status::done);
    CHECK(complete.list({}).empty());

    const auto childless = catalog_of({epic});
    CHECK_FALSE(childless.epic_progress("P-1").complete);
}

TEST_CASE("blocked_by and parent are validated against the board", "[catalog][validate]") {
    Ticket a = make("P-1");
    Ticket b = make("P-2");
    b.blocked_by = {"P-1"};
    Ticket c = make("P-3");
    c.blocked_by = {"P-2"};
    Ticket epic = make("P-4");
    epic.type = TicketType::epic;
    const auto catalog = catalog_of({a, b, c, epic});

    const std::vector<std::string> fine{"P-3"};
    CHECK_FALSE(catalog.blocked_by_error("P-5", fine).has_value());
    const std::vector<std::string> unknown{"P-9"};
    CHECK(catalog.blocked_by_error("P-1", unknown).value() ==
          "blocked_by: no ticket P-9 on this board");
    const std::vector<std::string> self{"P-1"};
    CHECK_THAT(catalog.blocked_by_error("P-1", self).value(),
               Catch::Contains("cannot block itself"));
    const std::vector<std::string> malformed{"p-1"};
    CHECK_THAT(catalog.blocked_by_error("P-1", malformed).value(),
               Catch::Contains("is not a ticket id"));
    const std::vector<std::string> cycle{"P-3"};
    CHECK(catalog.blocked_by_error("P-1", cycle).value() ==
          "blocked_by: P-1 → P-3 → P-2 → P-1 would be a cycle (each waits for the next)");

    CHECK_FALSE(catalog.parent_error("P-1", "P-4").has_value());
    CHECK_FALSE(catalog.parent_error("P-1", "").has_value());
    CHECK(catalog.parent_error("P-1", "P-2").value() == "parent: P-2 is a task, not an epic");
    CHECK(catalog.parent_error("P-1", "P-8").value() == "parent: no ticket P-8 on this board");
    CHECK_THAT(catalog.parent_error("P-4", "P-4").value(), Catch::Contains("its own parent"));

    // Epics in epics: P-6 is inside P-5, which is inside P-4.
    Ticket outer = epic;
    Ticket middle = make("P-5");
    middle.type = TicketType::epic;
    middle.parent = "P-4";
    Ticket inner = make("P-6");
    inner.type = TicketType::epic;
    inner.parent = "P-5";
    const auto nested = catalog_of({outer, middle, inner});
    CHECK_FALSE(nested.parent_error("P-6", "P-4").has_value());
    CHECK(nested.parent_error("P-4", "P-6").value() ==
          "parent: P-4 → P-6 → P-5 → P-4 would be a cycle (each inside the next)");
    CHECK(nested.parent_error("P-4", "P-5").value() ==
          "parent: P-4 → P-5 → P-4 would be a cycle (each inside the next)");
}

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
    catalog_index::IndexLine line{{11, 2048, 123456789}, summarize(t)};
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
        Ticket edited = third.catalog.find("P-2")->ticket;
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
    // Above 2,048 tickets the stats are split between two threads: a change in either half
    // must be seen. Logs are copies of one (no fsync each), renamed per ticket.
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

TEST_CASE("replace: a catalog that follows changes answers as one built afresh",
          "[catalog][replace]") {
    Ticket epic = make("P-1");
    epic.type = TicketType::epic;
    Ticket child = make("P-2", 2, 1);
    child.parent = "P-1";
    Ticket sibling = make("P-3", 2, 2);
    sibling.parent = "P-1";
    sibling.status = Status::done;
    sibling.resolution = Resolution::completed;
    Ticket standalone = make("P-4", 1, 3);
    // A long id: its string is on the heap, so a stale view of it would dangle (ASan).
    Ticket long_id = make("P-1000000000000000000000000000000", 3, 4);
    std::vector<Ticket> board{epic, child, sibling, standalone, long_id};
    Catalog followed = catalog_of(board);
    REQUIRE(followed.ready(Policy{}, {}).size() == 3);

    // The child runs, then finishes: the epic is done; the standalone ticket is cancelled.
    child.status = Status::research;
    child.run = running(Status::research);
    REQUIRE(followed.replace(summarize(child)));
    CHECK(followed.epic_state(sibling) == EpicState::in_flight);
    child.run.reset();
    child.status = Status::done;
    child.resolution = Resolution::completed;
    standalone.status = Status::done;
    standalone.resolution = Resolution::wont_do;
    long_id.priority = 0;
    for (const Ticket& t : {child, standalone, long_id}) REQUIRE(followed.replace(summarize(t)));
    CHECK_FALSE(followed.replace(summarize(make("P-9"))));  // not on the board: build anew

    const Catalog fresh = catalog_of({epic, child, sibling, standalone, long_id});
    CHECK(ids(followed.ready(Policy{}, {})) == ids(fresh.ready(Policy{}, {})));
    ListFilter everything;
    everything.all = true;
    CHECK(ids(followed.list(everything)) == ids(fresh.list(everything)));
    CHECK(followed.epic_progress("P-1").complete);
    CHECK(followed.epic_progress("P-1").done == 2);
    CHECK(followed.find(long_id.id) != nullptr);
    CHECK(followed.find(long_id.id)->ticket.priority == 0);
    CHECK(followed.entries() == fresh.entries());
}
