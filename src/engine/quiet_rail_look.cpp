#include "engine/quiet_rail_look.h"

namespace tent {

bool quiet_rail_due(const QuietRailView& rail) {
    return rail.awaiting_replies || rail.silent_for < kRecentArrival || rail.since_look >= kQuietLookInterval;
}

} // namespace tent
