// init and create through the application layer: ids, refusals, concurrency.

#include "app/app_test_support.hpp"

#include <board/app.hpp>
#include <board/event_log.hpp>

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace board;
using Kind = app::Refusal::Kind;
using app_test::ana;
using app_test::TempBoard;

TEST_CASE("init writes a loadable board once, and refuses a second time", "[app][init]") {
    TempBoard board{"WEB"};
    CHECK(fs::exists(board.root / "board.yaml"));
    CHECK(fs::is_directory(board.root / "tickets"));
    {
        // A board kept in git keeps the per-machine caches and locks out of it.
        std::ifstream in{board.root / "tickets" / ".gitignore"};
        const std::string ignored{std::istreambuf_iterator<char>{in}, {}};
        for (const char* name : {".index\n", ".last-id\n", ".lock\n", ".daemon.lock\n"})
            CHECK_THAT(ignored, Catch::Contains(name));
    }
    const auto again = app::init_board(board.root, "WEB");
    REQUIRE_FALSE(again);
    CHECK(again.error().kind == Kind::refused);
    CHECK_THAT(again.error().message, Catch::Contains("already holds a board.yaml"));
    CHECK(app::init_board(board.root / "other", "web").error().kind == Kind::invalid);
}

TEST_CASE("create allocates the next id and writes the created event", "[app][create]") {
    TempBoard board{"WEB"};
    app::CreateRequest request;
    request.title = "Retry uploads";
    request.type = "feature";
    request.labels = {"backend"};
    app::Board b{board.root};
    const auto first = b.create(request, ana);
    REQUIRE(first);
    CHECK(first.value().ticket.id == "WEB-1");
    CHECK(b.create(request, ana).value().ticket.id == "WEB-2");
    const auto loaded = load_ticket(board.root / "tickets" / "WEB-2");
    REQUIRE(std::holds_alternative<Loaded>(loaded));
    const Ticket& t = std::get<Loaded>(loaded).ticket;
    CHECK(t.title == "Retry uploads");
    CHECK(t.type == TicketType::feature);
    CHECK(t.status == Status::backlog);
}

TEST_CASE("create refuses bad input with one line and leaves no ticket behind", "[app][create]") {
    TempBoard board{"WEB"};

    struct Bad {
        const char* what;
        app::CreateRequest request;
        Kind kind;
    };

    app::CreateRequest base;
    base.title = "x";
    auto with = [&](auto change) {
        app::CreateRequest r = base;
        change(r);
        return r;
    };
    const Bad bad = GENERATE_COPY(values<Bad>({
        {"empty title", with([](auto& r) { r.title.clear(); }), Kind::refused},
        {"priority", with([](auto& r) { r.priority = 7; }), Kind::refused},
        {"type", with([](auto& r) { r.type = "story"; }), Kind::invalid},
        {"requires", with([](auto& r) { r.requires_ = "soon"; }), Kind::invalid},
        {"self-ish blocker", with([](auto& r) { r.blocked_by = {"not-an-id"}; }), Kind::refused},
    }));
    CAPTURE(bad.what);
    const auto outcome = app::Board{board.root}.create(bad.request, ana);
    REQUIRE_FALSE(outcome);
    CHECK(outcome.error().kind == bad.kind);
    CHECK(outcome.error().message.starts_with("create: "));
    CHECK_FALSE(fs::exists(board.root / "tickets" / "WEB-1"));
}

TEST_CASE("legacy --manual creates a ticket awaiting work", "[app][create][legacy]") {
    TempBoard board{"WEB"};
    app::CreateRequest request;
    request.title = "Rotate the keys";
    request.manual = true;
    const auto outcome = app::Board{board.root}.create(request, ana);
    REQUIRE(outcome);
    CHECK(outcome.value().ticket.awaiting == Awaiting::work);
}

TEST_CASE("4 concurrent creates never share an id", "[app][create][concurrency]") {
    TempBoard board{"WEB"};
    std::vector<std::string> ids(4 * 10);
    std::vector<std::thread> creators;
    for (std::size_t c = 0; c < 4; ++c) {
        creators.emplace_back([&, c] {
            app::CreateRequest request;
            request.title = "ticket from creator " + std::to_string(c);
            app::Board b{board.root};
            for (std::size_t i = 0; i < 10; ++i) {
                auto made = b.create(request, ana);
                ids[c * 10 + i] = made ? made.value().ticket.id : made.error().message;
            }
        });
    }
    for (auto& t : creators) t.join();
    const std::set<std::string> distinct(ids.begin(), ids.end());
    CHECK(distinct.size() == ids.size());
    CHECK(distinct.count("WEB-40") == 1);
}
