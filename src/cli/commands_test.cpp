// Who a `board` command acts as.

#include "cli/session.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace board;

TEST_CASE("inside an agent run, commands act as the agent", "[cli][provenance]") {
    ::setenv("BOARD_RUN", "r7", 1);
    ::setenv("BOARD_PHASE", "implementing", 1);
    const Actor inside = cli::invoking_actor("ana");
    ::unsetenv("BOARD_RUN");
    ::unsetenv("BOARD_PHASE");
    CHECK(inside == Actor{ActorKind::agent, "implementing"});
    CHECK(cli::invoking_actor("bo") == Actor{ActorKind::human, "bo"});
}
