// Histories for people: what each event changed, and the state in one line.

#include "cli/history.hpp"

#include "support/source_dir.hpp"

#include <board/app.hpp>
#include <board/reduce.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>

namespace fs = std::filesystem;
using namespace board;

TEST_CASE("replay --diff names each field an event changed", "[cli][replay]") {
    const auto history = app::Board{testing::source_dir()}.history("PROJ-1");
    REQUIRE(history);
    const auto& events = history.value().events;
    const Ticket before = fold(std::span{events}.first(8)).ticket;
    const Ticket after = fold(std::span{events}.first(9)).ticket;  // the rejection
    const auto changes = cli::describe_changes(before, after);
    const auto mentions = [&](std::string_view text) {
        return std::any_of(changes.begin(), changes.end(), [&](const std::string& c) {
            return c.find(text) != std::string::npos;
        });
    };
    CHECK(mentions("awaiting: approval → –"));
    CHECK(mentions("phase_attempts: 0 → 1"));
    CHECK(mentions("notes:"));
    CHECK_FALSE(mentions("title:"));
    CHECK(cli::describe_state(after) == "planning, agent's turn, attempts 1");
}
