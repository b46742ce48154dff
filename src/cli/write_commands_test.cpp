// `board init` and `board create` against a real folder: ids, durability path, provenance.

#include "cli/write_commands.hpp"

#include <board/event_log.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace board;

namespace {

struct TempBoard {
    fs::path root = fs::temp_directory_path() / ("board-write-test-" + std::to_string(::getpid()) +
                                                 "-" + std::to_string(counter++));
    static inline int counter = 0;

    TempBoard() { REQUIRE(cli::init_board(root, "WEB").exit_code == 0); }

    ~TempBoard() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }

    TempBoard(const TempBoard&) = delete;
    TempBoard& operator=(const TempBoard&) = delete;
};

const Actor ana{ActorKind::human, "ana"};

}  // namespace

TEST_CASE("init writes a loadable board once, and refuses a second time", "[cli][init]") {
    TempBoard board;
    CHECK(fs::exists(board.root / "board.yaml"));
    CHECK(fs::is_directory(board.root / "tickets"));
    {
        // A board kept in git keeps the per-machine caches and locks out of it.
        std::ifstream in{board.root / "tickets" / ".gitignore"};
        const std::string ignored{std::istreambuf_iterator<char>{in}, {}};
        for (const char* name : {".index\n", ".last-id\n", ".lock\n", ".daemon.lock\n"})
            CHECK_THAT(ignored, Catch::Contains(name));
    }
    const auto again = cli::init_board(board.root, "WEB");
    CHECK(again.exit_code == 1);
    CHECK_THAT(again.message, Catch::Contains("already holds a board.yaml"));
    CHECK(cli::init_board(board.root / "other", "web").exit_code == 2);
}

TEST_CASE("create allocates the next id and writes the created event", "[cli][create]") {
    TempBoard board;
    cli::CreateRequest request;
    request.title = "Retry uploads";
    request.type = "feature";
    request.labels = {"backend"};
    const auto first = cli::create_ticket(board.root, request, ana, false);
    REQUIRE(first.exit_code == 0);
    CHECK(first.output == "WEB-1\n");
    CHECK(cli::create_ticket(board.root, request, ana, false).output == "WEB-2\n");
    const auto loaded = load_ticket(board.root / "tickets" / "WEB-2");
    REQUIRE(std::holds_alternative<Loaded>(loaded));
    const Ticket& t = std::get<Loaded>(loaded).ticket;
    CHECK(t.title == "Retry uploads");
    CHECK(t.type == TicketType::feature);
    CHECK(t.status == Status::backlog);
}

TEST_CASE("create refuses bad input with one line and leaves no ticket behind", "[cli][create]") {
    TempBoard board;

    struct Bad {
        const char* what;
        cli::CreateRequest request;
        int exit_code;
    };

    cli::CreateRequest base;
    base.title = "x";
    auto with = [&](auto change) {
        cli::CreateRequest r = base;
        change(r);
        return r;
    };
    const Bad bad = GENERATE_COPY(values<Bad>({
        {"empty title", with([](auto& r) { r.title.clear(); }), 1},
        {"priority", with([](auto& r) { r.priority = 7; }), 1},
        {"type", with([](auto& r) { r.type = "story"; }), 2},
        {"requires", with([](auto& r) { r.requires_ = "soon"; }), 2},
        {"self-ish blocker", with([](auto& r) { r.blocked_by = {"not-an-id"}; }), 1},
    }));
    CAPTURE(bad.what);
    const auto outcome = cli::create_ticket(board.root, bad.request, ana, false);
    CHECK(outcome.exit_code == bad.exit_code);
    CHECK_FALSE(outcome.message.empty());
    CHECK_FALSE(fs::exists(board.root / "tickets" / "WEB-1"));
}

TEST_CASE("legacy --manual creates a ticket awaiting work", "[cli][create][legacy]") {
    TempBoard board;
    cli::CreateRequest request;
    request.title = "Rotate the keys";
    request.manual = true;
    const auto outcome = cli::create_ticket(board.root, request, ana, true);
    REQUIRE(outcome.exit_code == 0);
    CHECK_THAT(outcome.output, Catch::Contains(R"("awaiting":"work")"));
}

TEST_CASE("4 concurrent creates never share an id", "[cli][create][concurrency]") {
    TempBoard board;
    std::vector<std::string> ids(4 * 10);
    std::vector<std::thread> creators;
    for (std::size_t c = 0; c < 4; ++c) {
        creators.emplace_back([&, c] {
            cli::CreateRequest request;
            request.title = "ticket from creator " + std::to_string(c);
            for (std::size_t i = 0; i < 10; ++i)
                ids[c * 10 + i] = cli::create_ticket(board.root, request, ana, false).output;
        });
    }
    for (auto& t : creators) t.join();
    const std::set<std::string> distinct(ids.begin(), ids.end());
    CHECK(distinct.size() == ids.size());
    CHECK(distinct.count("WEB-40\n") == 1);
}

TEST_CASE("inside an agent run, commands act as the agent", "[cli][provenance]") {
    ::setenv("BOARD_RUN", "r7", 1);
    ::setenv("BOARD_PHASE", "implementing", 1);
    const Actor inside = cli::invoking_actor("ana");
    ::unsetenv("BOARD_RUN");
    ::unsetenv("BOARD_PHASE");
    CHECK(inside == Actor{ActorKind::agent, "implementing"});
    CHECK(cli::invoking_actor("bo") == Actor{ActorKind::human, "bo"});
}
