#include "engine/quiet_rail_look.h"

namespace tent {

bool quiet_rail_due(const QuietRailView& rail) {
    return rail.awaiting_replies || rail.silent_for < kRecentArrival || rail.since_look >= kQuietLookInterval;
}

bool turn_ends_after_look(const TurnLook& turn) {
    return turn.rails_quiet && !turn.found_work && !turn.work_waits && turn.since_care < kCareInterval;
}

} // namespace tent
