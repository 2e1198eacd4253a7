// A FAIL that no node makes: every failing tensor only inherits its error (isolation ran every
// candidate and none differs beyond tolerance alone) and every graph output is within tolerance.
#pragma once

#include "onnxprobe/pipeline/engine.h"

namespace onnxprobe {

// The rule, derived: a tensor fails when some elements differ beyond the tolerance. A fault is a
// node that computes differently (a changed weight, attribute, kernel or precision): run alone
// on side A's exact inputs it differs beyond tolerance, and localization names it (or, below
// tolerance alone, names it as the source whose error the graph amplifies). When localization
// isolated every candidate without error and names no node at all, the differences
// are the two sides' rounding carried and amplified through the graph (deep models put a few of
// millions of elements past an elementwise tolerance this way); when, in addition, every graph
// output was compared and is within tolerance, nothing the model returns is wrong. Such rows
// then pass, keeping their measurement (within_tolerance false) and saying why in `reason`;
// the report counts them (ComparisonResult::inherited_passed) and says so in a note. Anything
// else (a node that introduces, an isolation that failed, an output beyond tolerance or not
// compared, a comparison without isolation) keeps the FAIL.
void PassInheritedOnly(const Model* a, const Model* b, CompareReport* report);

}  // namespace onnxprobe
