// The program shown in docs/embedding.md: fold a ticket's life with the pure reducer alone.
#include <board/next_action.hpp>
#include <board/reduce.hpp>

#include <cstdio>

int main() {
    using namespace board;
    const Actor ana{ActorKind::human, "ana"}, daemon{ActorKind::system, ""};
    Created created;
    created.ticket = "PROJ-1";
    created.title = "Add retry to the uploader";
    RunFinished finished;
    finished.run = "r1";
    finished.signal = Signal::approval_needed;  // what the agent printed, parsed
    const Event log[] = {
        {1, 1, "e1", 1'000, ana, created},
        {1, 2, "e2", 2'000, daemon, RunStarted{"r1", Status::research, 1, 1, {}, {}}},
        {1, 3, "e3", 3'000, daemon, finished},
        {1, 4, "e4", 4'000, ana, VerdictGiven{Verdict::approved, "3 retries"}}};
    const Folded folded = fold(log);
    if (folded.failure) return std::puts(folded.failure->second.message.c_str()), 1;
    const Ticket& ticket = folded.ticket;
    const bool agent_turn = std::holds_alternative<StartRun>(next_action(ticket, Policy{}));
    std::printf("%s is in %s; %s\n",
                ticket.id.c_str(),
                std::string{to_string(ticket.status)}.c_str(),
                agent_turn ? "an agent runs next" : "a human starts planning");
}
