#pragma once
// The deck's `campaign:` section: keys (register_schema, one line in apps/mantissa/Schema.cpp)
// and their translation into a CampaignConfig (config_from_deck).
#include <mantissa/workflow/CampaignConfig.hpp>

#include <string>

namespace mantissa {
class Schema;
class Deck;
}  // namespace mantissa

namespace mantissa::workflow {

class Registry;

// The keys of campaign.variants[] per precision role come from the precision tables of the
// physics in `registry` (PrecisionTable: the one statement of the legal combinations).
void register_schema(Schema& schema, const Registry& registry);
// Reads campaign.* plus run.steps and physics; throws mantissa::Error naming the key.
CampaignConfig config_from_deck(const Deck& deck);
// checkpoint.dir must be a relative path that stays inside the run directory (--overwrite
// replaces the run directory and must take the checkpoints with it; a moved run directory
// must still resume). Throws mantissa::Error naming the key, `where` (the deck line) and the
// remedy.
void check_checkpoint_dir(const std::string& dir, const std::string& where = "");

}  // namespace mantissa::workflow
