// Tests the daemon's kept answers: each holds until a ticket changes, board.yaml changes, or
// a standing it shows changes by time.

#include "orchestrator/answer_cache.hpp"

#include "support/file_clock.hpp"
#include "support/files.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

using namespace board;
using board::orchestrator::AnswerCache;

namespace {

app::QueryAnswer answer(std::string output, std::optional<UnixMillis> changes_at = {}) {
    app::QueryAnswer a;
    a.output = std::move(output);
    a.changes_at = changes_at;
    return a;
}

}  // namespace

TEST_CASE(
    "a kept answer holds until board.yaml changes, a backoff it shows ends, or a ticket "
    "changes",
    "[answer_cache]") {
    board::testing::TempDir dir{"board-answer-cache-"};
    const auto yaml = dir.path() / "board.yaml";
    REQUIRE(write_file_atomically(yaml, "prefix: W\n").empty());
    AnswerCache cache{yaml};

    // Made from a board.yaml written within the file clock's tick: not kept, since an edit
    // in place could follow within that tick with the same stamp.
    CHECK(cache.find("list", 1'000) == nullptr);
    cache.keep("list", answer("[0]"));
    // Still within the tick now, so it was when kept (a loaded machine may take longer).
    if (stamp_of(yaml)->ctime_ns >= file_times_from_now_ns())
        CHECK(cache.find("list", 1'000) == nullptr);
    board::testing::let_the_file_clock_tick();

    cache.find("list", 1'000);
    cache.keep("list", answer("[1]"));
    REQUIRE(cache.find("list", 1'000) != nullptr);
    CHECK(cache.find("list", 1'000)->output == "[1]");
    CHECK(cache.find("ready", 1'000) == nullptr);

    // board.yaml written again (the policy the standings are told by may differ).
    REQUIRE(write_file_atomically(yaml, "prefix: W\nwip: { research: 1 }\n").empty());
    board::testing::let_the_file_clock_tick();
    CHECK(cache.find("list", 1'000) == nullptr);
    cache.keep("list", answer("[2]"));
    CHECK(cache.find("list", 1'000)->output == "[2]");
    // board.yaml removed: the answers read without it are not those read with it.
    std::filesystem::remove(yaml);
    CHECK(cache.find("list", 1'000) == nullptr);
    cache.keep("list", answer("[3]"));
    CHECK(cache.find("list", 1'000)->output == "[3]");

    // A backoff the answer shows ends at 5'000: from then on it is made again.
    cache.keep("ready", answer("[backing off]", 5'000));
    CHECK(cache.find("ready", 4'999) != nullptr);
    CHECK(cache.find("ready", 5'000) == nullptr);
    CHECK(cache.find("list", 5'000) != nullptr);  // it shows no backoff

    cache.clear();  // a ticket changed
    CHECK(cache.find("list", 5'000) == nullptr);
}
