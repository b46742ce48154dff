#include <board/reduce.hpp>
namespace board {
Reduced reduce(Ticket, const Event&) { return Rejection{RejectReason::invalid_field, "stub"}; }
Folded fold(std::span<const Event>) { return {}; }
std::string_view to_string(RejectReason) { return "stub"; }
}  // namespace board
