#pragma once
// What the commands that read share: the read-only session, and how a request to a person is
// printed (show, why, next --awaiting).

#include "cli/session.hpp"

#include <board/ticket.hpp>

#include <string>
#include <string_view>
#include <variant>

namespace board::cli {

/// The session for a read, or the exit code of why there is none.
std::variant<Session, int> reading(const GlobalOptions& options, std::string_view command);

/// How long ago `since` was, roughly: `40s`, `12m`, `3h 5m`, `2d 4h`.
std::string waited(UnixMillis since);

/// What a ticket that awaits a person asks of them, indented under its heading: who asked,
/// their words, the questions with their choices, the artifact to judge, what to type.
std::string request_text(const Ticket& t);

}  // namespace board::cli
