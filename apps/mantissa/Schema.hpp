#pragma once
// The schema of a whole deck: the core sections plus every module's section.
#include <mantissa/core/Schema.hpp>

namespace mantissa::app {

Schema full_schema();

}  // namespace mantissa::app
