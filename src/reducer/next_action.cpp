#include <board/next_action.hpp>
namespace board {}
