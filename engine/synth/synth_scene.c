/* SPDX-License-Identifier: MIT */
/*
 * The three synthetic scenes as tables: furniture with real-world sizes,
 * small objects and the furniture they start on, and the goals the wearer
 * works through (each a list of pick, place and use steps). Also builds
 * the objects of a recording from these tables.
 */
#include "synth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "banned.h"
#include "err.h"

/* Gap kept between items on a top, and between an item and the top's edge (m). */
#define SPOT_GAP 0.03f
/* Tries before a top counts as full. */
#define SPOT_TRIES 200
/* Grid step of the fallback when the random tries find no room (m). */
#define GRID_STEP 0.01f

/* Step shorthands: the tables read like the task lists they are. */
#define PICK(k, d) { SYNTH__PICK, "pick up", (k), NULL, -1, REC_HAND_NONE, 1.1f, (d) }
#define PLACE(k, w, d) { SYNTH__PLACE, "put down", (k), (w), -1, REC_HAND_NONE, 1.0f, (d) }
#define USE(v, k, w, at, h, s, d) { SYNTH__USE, (v), (k), (w), (at), (h), (s), (d) }
#define END { SYNTH__USE, NULL, -1, NULL, -1, REC_HAND_NONE, 0, NULL }
#define L REC_HAND_LEFT
#define R REC_HAND_RIGHT
#define B REC_HAND_BOTH
#define N REC_HAND_NONE

/* ======================= Kitchen ======================= */

static const struct synth__furn_tpl kitchen_furn[] = {
	/* id, name, category, x, y, yaw, sx, sy, sz, z0, flags */
	{ "fridge_1", "fridge", "fridge", 0.45f, 4.25f, 0, 0.70f, 0.70f, 1.80f, 0, 0 },
	{ "counter_1", "left counter", "counter", 1.60f, 4.30f, 0, 1.60f, 0.60f, 0.90f, 0,
	  SYNTH__SUPPORT },
	{ "sink_1", "sink", "sink", 2.80f, 4.30f, 0, 0.80f, 0.60f, 0.90f, 0, 0 },
	{ "counter_2", "right counter", "counter", 3.80f, 4.30f, 0, 1.20f, 0.60f, 0.90f, 0,
	  SYNTH__SUPPORT },
	{ "stove_1", "stove", "stove", 4.70f, 4.30f, 0, 0.60f, 0.60f, 0.90f, 0, SYNTH__SUPPORT },
	{ "bin_1", "trash bin", "bin", 5.50f, 4.38f, 0, 0.35f, 0.35f, 0.60f, 0, 0 },
	{ "shelves_1", "shelves", "shelves", 5.825f, 2.40f, -90, 1.00f, 0.35f, 1.30f, 0,
	  SYNTH__SUPPORT },
	{ "sideboard_1", "sideboard", "sideboard", 0.25f, 1.80f, 90, 1.20f, 0.50f, 0.90f, 0,
	  SYNTH__SUPPORT },
	{ "table_1", "dining table", "table", 2.60f, 1.70f, 0, 1.40f, 0.80f, 0.75f, 0,
	  SYNTH__SUPPORT },
	{ "chair_1", "black chair", "chair", 2.20f, 0.90f, 0, 0.45f, 0.45f, 0.90f, 0, 0 },
	{ "chair_2", "white chair", "chair", 3.00f, 0.90f, 0, 0.45f, 0.45f, 0.90f, 0, 0 },
	{ "chair_3", "wooden chair", "chair", 2.20f, 2.50f, 180, 0.45f, 0.45f, 0.90f, 0, 0 },
	{ "chair_4", "grey chair", "chair", 3.00f, 2.50f, 180, 0.45f, 0.45f, 0.90f, 0, 0 },
};

static const struct synth__item_tpl kitchen_items[] = {
	/* id, name, category, sx, sy, sz, start, hand, fixed */
	{ "coffee_machine_1", "coffee machine", "coffee machine", 0.25f, 0.30f, 0.35f,
	  "counter_1", R, true },
	{ "mug_1", "red mug", "mug", 0.09f, 0.09f, 0.10f, "shelves_1", R, false },
	{ "mug_2", "blue mug", "mug", 0.09f, 0.09f, 0.10f, "shelves_1", R, false },
	{ "glass_1", "glass", "glass", 0.07f, 0.07f, 0.12f, "sideboard_1", R, false },
	{ "plate_1", "white plate", "plate", 0.26f, 0.26f, 0.025f, "sideboard_1", B, false },
	{ "plate_2", "green plate", "plate", 0.26f, 0.26f, 0.025f, "table_1", B, false },
	{ "bowl_1", "bowl", "bowl", 0.16f, 0.16f, 0.07f, "table_1", R, false },
	{ "kettle_1", "kettle", "kettle", 0.22f, 0.16f, 0.24f, "stove_1", R, false },
	{ "cutting_board_1", "cutting board", "cutting board", 0.40f, 0.28f, 0.02f, "counter_1",
	  B, false },
	{ "knife_1", "knife", "knife", 0.25f, 0.03f, 0.02f, "counter_1", R, false },
	{ "spoon_1", "spoon", "spoon", 0.17f, 0.035f, 0.015f, "table_1", R, false },
	{ "bread_1", "loaf of bread", "bread", 0.28f, 0.12f, 0.10f, "counter_2", L, false },
	{ "apple_1", "apple", "apple", 0.08f, 0.08f, 0.08f, "sideboard_1", L, false },
	{ "sponge_1", "sponge", "sponge", 0.10f, 0.07f, 0.03f, "counter_2", R, false },
};

static const struct synth__goal_tpl kitchen_goals[] = {
	{ "make coffee", { "mug" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "counter_1", "Put the {0} under the coffee machine"),
		USE("press", -1, "coffee machine", -1, R, 1.2f, "Press the start button of the coffee machine"),
		PICK(0, "Take the {0} of coffee"),
		PLACE(0, "table_1", "Put the {0} on the {f}"),
		END } },
	{ "boil water", { "kettle" }, {
		PICK(0, "Take the kettle from the {s}"),
		USE("fill", 0, "sink", -1, R, 2.5f, "Fill the kettle with water at the sink"),
		PLACE(0, "stove_1", "Put the kettle on the stove"),
		USE("switch on", -1, "stove_1", -1, R, 0.8f, "Switch on the stove"),
		END } },
	{ "make tea", { "mug", "kettle" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "counter_2", "Put the {0} on the {f} next to the stove"),
		PICK(1, "Lift the kettle from the {s}"),
		USE("pour", 1, NULL, 0, R, 2.0f, "Pour hot water from the kettle into the {0}"),
		PLACE(1, "stove_1", "Put the kettle back on the stove"),
		END } },
	{ "make a sandwich", { "cutting board", "bread", "knife" }, {
		PICK(0, "Take the cutting board from the {s}"),
		PLACE(0, "table_1", "Put the cutting board on the {f}"),
		PICK(1, "Take the bread from the {s}"),
		PLACE(1, "table_1", "Put the bread next to the cutting board"),
		PICK(2, "Take the knife from the {s}"),
		USE("cut", 1, NULL, -1, R, 2.5f, "Cut two slices of bread with the knife"),
		PLACE(2, "table_1", "Put the knife down on the {f}"),
		END } },
	{ "clean up", { "plate", "mug" }, {
		PICK(0, "Take the {0} from the {s}"),
		USE("wash", 0, "sink", -1, B, 2.5f, "Wash the {0} in the sink"),
		PLACE(0, "sideboard_1", "Put the {0} away on the {f}"),
		PICK(1, "Take the {1} from the {s}"),
		USE("wash", 1, "sink", -1, B, 2.0f, "Rinse the {1} in the sink"),
		PLACE(1, "shelves_1", "Put the {1} back on the {f}"),
		END } },
	{ "set the table", { "plate", "spoon" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "table_1", "Put the {0} on the {f}"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "table_1", "Lay the {1} beside the {0}"),
		END } },
	{ "pour a drink", { "glass" }, {
		PICK(0, "Take the {0} from the {s}"),
		USE("fill", 0, "sink", -1, R, 2.0f, "Fill the {0} with water at the sink"),
		USE("drink", 0, NULL, -1, R, 2.0f, "Drink from the {0}"),
		PLACE(0, "table_1", "Put the {0} on the {f}"),
		END } },
	{ "have a snack", { "apple", "bowl" }, {
		USE("open", -1, "fridge_1", -1, L, 1.0f, "Open the fridge"),
		PICK(0, "Take the {0} from the {s}"),
		USE("wash", 0, "sink", -1, B, 1.5f, "Rinse the {0} at the sink"),
		PLACE(0, "table_1", "Put the {0} on the {f}"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "table_1", "Put the {1} next to the {0}"),
		END } },
	{ "tidy the counter", { "knife", "sponge" }, {
		PICK(1, "Take the {1} from the {s}"),
		USE("wipe", -1, "counter_2", -1, R, 2.0f, "Wipe the {f} with the {1}"),
		PLACE(1, "counter_2", "Put the {1} back by the sink"),
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "sideboard_1", "Put the {0} away on the {f}"),
		END } },
	{ "put away the dishes", { "bowl", "glass", "spoon" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "sideboard_1", "Put the {0} on the {f}"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "shelves_1", "Put the {1} back on the {f}"),
		PICK(2, "Take the {2} from the {s}"),
		PLACE(2, "sideboard_1", "Put the {2} away on the {f}"),
		END } },
	{ "clear the table", { "cutting board", "bread" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "counter_1", "Put the {0} back on the {f}"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "counter_2", "Put the {1} back on the {f}"),
		END } },
};

/* ======================= Apartment ======================= */

static const struct synth__furn_tpl apartment_furn[] = {
	{ "sofa_1", "sofa", "sofa", 2.20f, 0.45f, 180, 2.00f, 0.90f, 0.85f, 0, SYNTH__SUPPORT },
	{ "coffee_table_1", "coffee table", "coffee table", 2.20f, 2.10f, 0, 1.10f, 0.60f, 0.45f,
	  0, SYNTH__SUPPORT },
	{ "tv_stand_1", "TV stand", "tv stand", 2.20f, 4.775f, 0, 1.60f, 0.45f, 0.50f, 0,
	  SYNTH__SUPPORT },
	{ "bookshelf_1", "bookshelf", "bookshelf", 0.175f, 3.20f, 90, 0.90f, 0.35f, 1.40f, 0,
	  SYNTH__SUPPORT },
	{ "armchair_1", "armchair", "armchair", 0.60f, 1.20f, 90, 0.80f, 0.80f, 0.90f, 0,
	  SYNTH__SUPPORT },
	{ "side_table_1", "side table", "side table", 3.70f, 0.35f, 180, 0.50f, 0.50f, 0.55f, 0,
	  SYNTH__SUPPORT },
	{ "dining_table_1", "dining table", "table", 5.40f, 2.30f, 0, 1.20f, 0.80f, 0.75f, 0,
	  SYNTH__SUPPORT },
	{ "chair_1", "black chair", "chair", 5.10f, 1.50f, 0, 0.45f, 0.45f, 0.90f, 0, 0 },
	{ "chair_2", "white chair", "chair", 5.70f, 1.50f, 0, 0.45f, 0.45f, 0.90f, 0, 0 },
	{ "chair_3", "wooden chair", "chair", 5.40f, 3.10f, 180, 0.45f, 0.45f, 0.90f, 0, 0 },
	{ "counter_1", "kitchen counter", "counter", 5.20f, 4.70f, 0, 1.60f, 0.60f, 0.90f, 0,
	  SYNTH__SUPPORT },
	{ "sink_1", "sink", "sink", 6.50f, 4.70f, 0, 1.00f, 0.60f, 0.90f, 0, 0 },
	{ "plant_1", "potted plant", "plant", 6.60f, 0.40f, 0, 0.40f, 0.40f, 1.00f, 0, 0 },
};

static const struct synth__item_tpl apartment_items[] = {
	{ "tv_1", "TV", "tv", 1.20f, 0.08f, 0.70f, "tv_stand_1", R, true },
	{ "lamp_1", "lamp", "lamp", 0.20f, 0.20f, 0.45f, "side_table_1", R, true },
	{ "remote_1", "black remote", "remote", 0.05f, 0.16f, 0.025f, "coffee_table_1", R, false },
	{ "remote_2", "grey remote", "remote", 0.05f, 0.16f, 0.025f, "tv_stand_1", R, false },
	{ "book_1", "red book", "book", 0.15f, 0.22f, 0.03f, "bookshelf_1", R, false },
	{ "book_2", "blue book", "book", 0.15f, 0.22f, 0.03f, "coffee_table_1", R, false },
	{ "book_3", "cookbook", "book", 0.20f, 0.26f, 0.03f, "counter_1", B, false },
	{ "cushion_1", "striped cushion", "cushion", 0.40f, 0.40f, 0.12f, "sofa_1", B, false },
	{ "cushion_2", "plain cushion", "cushion", 0.40f, 0.40f, 0.12f, "armchair_1", B, false },
	{ "mug_1", "white mug", "mug", 0.09f, 0.09f, 0.10f, "counter_1", R, false },
	{ "mug_2", "green mug", "mug", 0.09f, 0.09f, 0.10f, "dining_table_1", R, false },
	{ "glass_1", "glass", "glass", 0.07f, 0.07f, 0.12f, "dining_table_1", R, false },
	{ "plate_1", "plate", "plate", 0.26f, 0.26f, 0.025f, "dining_table_1", B, false },
	{ "magazine_1", "magazine", "magazine", 0.21f, 0.28f, 0.01f, "coffee_table_1", L, false },
	{ "watering_can_1", "watering can", "watering can", 0.30f, 0.15f, 0.25f, "counter_1", R,
	  false },
};

static const struct synth__goal_tpl apartment_goals[] = {
	{ "tidy the living room", { "book", "remote", "cushion" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "bookshelf_1", "Put the {0} back on the bookshelf"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "tv_stand_1", "Put the {1} on the TV stand"),
		PICK(2, "Take the {2} from the {s}"),
		PLACE(2, "sofa_1", "Put the {2} on the sofa"),
		END } },
	{ "watch TV", { "remote", "magazine" }, {
		PICK(0, "Take the {0} from the {s}"),
		USE("switch on", -1, "tv_1", -1, R, 1.0f, "Switch on the TV with the {0}"),
		PLACE(0, "coffee_table_1", "Put the {0} on the coffee table"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "side_table_1", "Put the {1} on the side table"),
		END } },
	{ "water the plant", { "watering can" }, {
		PICK(0, "Take the watering can from the {s}"),
		USE("fill", 0, "sink", -1, R, 2.5f, "Fill the watering can at the sink"),
		USE("water", -1, "plant_1", -1, R, 2.5f, "Water the potted plant"),
		PLACE(0, "counter_1", "Put the watering can back on the {f}"),
		END } },
	{ "read a book", { "book" }, {
		USE("switch on", -1, "lamp_1", -1, R, 0.8f, "Switch on the lamp"),
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "side_table_1", "Put the {0} under the lamp"),
		USE("open", 0, NULL, -1, B, 1.2f, "Open the {0}"),
		END } },
	{ "clear the dining table", { "mug", "plate" }, {
		PICK(0, "Take the {0} from the {s}"),
		USE("wash", 0, "sink", -1, B, 2.0f, "Wash the {0} in the sink"),
		PLACE(0, "counter_1", "Put the {0} on the {f} to dry"),
		PICK(1, "Take the {1} from the {s}"),
		USE("wash", 1, "sink", -1, B, 2.5f, "Wash the {1} in the sink"),
		PLACE(1, "counter_1", "Put the {1} on the {f} to dry"),
		END } },
	{ "have a drink", { "glass" }, {
		PICK(0, "Take the {0} from the {s}"),
		USE("fill", 0, "sink", -1, R, 2.0f, "Fill the {0} with water"),
		USE("drink", 0, NULL, -1, R, 2.0f, "Drink from the {0}"),
		PLACE(0, "coffee_table_1", "Put the {0} on the coffee table"),
		END } },
	{ "set the dining table", { "plate", "mug", "glass" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "dining_table_1", "Put the {0} on the dining table"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "dining_table_1", "Put the {1} next to the {0}"),
		PICK(2, "Take the {2} from the {s}"),
		PLACE(2, "dining_table_1", "Put the {2} beside the {0}"),
		END } },
	{ "tidy the armchair", { "cushion", "magazine" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "armchair_1", "Put the {0} on the armchair"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "coffee_table_1", "Put the {1} on the coffee table"),
		END } },
};

/* ======================= Office ======================= */

static const struct synth__furn_tpl office_furn[] = {
	{ "desk_1", "window desk", "desk", 1.30f, 5.25f, 0, 1.40f, 0.70f, 0.75f, 0, SYNTH__SUPPORT },
	{ "office_chair_1", "black office chair", "office chair", 0.90f, 4.55f, 0, 0.55f, 0.55f, 1.00f,
	  0, 0 },
	{ "desk_2", "corner desk", "desk", 4.00f, 5.25f, 0, 1.40f, 0.70f, 0.75f, 0, SYNTH__SUPPORT },
	{ "office_chair_2", "grey office chair", "office chair", 3.60f, 4.55f, 0, 0.55f, 0.55f, 1.00f,
	  0, 0 },
	{ "meeting_table_1", "meeting table", "table", 3.00f, 2.20f, 0, 2.00f, 1.00f, 0.75f, 0,
	  SYNTH__SUPPORT },
	{ "chair_1", "black chair", "chair", 2.50f, 1.25f, 0, 0.45f, 0.45f, 0.90f, 0, 0 },
	{ "chair_2", "white chair", "chair", 3.50f, 1.25f, 0, 0.45f, 0.45f, 0.90f, 0, 0 },
	{ "chair_3", "wooden chair", "chair", 2.50f, 3.15f, 180, 0.45f, 0.45f, 0.90f, 0, 0 },
	{ "chair_4", "grey chair", "chair", 3.50f, 3.15f, 180, 0.45f, 0.45f, 0.90f, 0, 0 },
	{ "bookshelf_1", "bookshelf", "bookshelf", 6.025f, 4.40f, -90, 0.90f, 0.35f, 1.40f, 0,
	  SYNTH__SUPPORT },
	{ "filing_cabinet_1", "filing cabinet", "filing cabinet", 5.90f, 2.80f, -90, 0.60f, 0.60f,
	  1.00f, 0, SYNTH__SUPPORT },
	{ "side_table_1", "printer table", "side table", 0.25f, 2.20f, 90, 0.80f, 0.50f, 0.70f, 0,
	  SYNTH__SUPPORT },
	{ "whiteboard_1", "whiteboard", "whiteboard", 3.00f, 0.025f, 180, 1.80f, 0.05f, 1.10f,
	  0.90f, 0 },
	{ "counter_1", "coffee counter", "counter", 5.90f, 1.00f, -90, 1.20f, 0.60f, 0.90f, 0,
	  SYNTH__SUPPORT },
};

static const struct synth__item_tpl office_items[] = {
	{ "printer_1", "printer", "printer", 0.45f, 0.40f, 0.25f, "side_table_1", R, true },
	{ "coffee_machine_1", "coffee machine", "coffee machine", 0.25f, 0.30f, 0.35f,
	  "counter_1", R, true },
	{ "laptop_1", "silver laptop", "laptop", 0.33f, 0.23f, 0.02f, "desk_1", B, false },
	{ "laptop_2", "black laptop", "laptop", 0.33f, 0.23f, 0.02f, "desk_2", B, false },
	{ "notebook_1", "yellow notebook", "notebook", 0.15f, 0.21f, 0.015f, "desk_1", L, false },
	{ "notebook_2", "grey notebook", "notebook", 0.15f, 0.21f, 0.015f, "bookshelf_1", L,
	  false },
	{ "pen_1", "blue pen", "pen", 0.14f, 0.012f, 0.012f, "desk_1", R, false },
	{ "pen_2", "red pen", "pen", 0.14f, 0.012f, 0.012f, "desk_2", R, false },
	{ "mug_1", "white mug", "mug", 0.09f, 0.09f, 0.10f, "desk_2", R, false },
	{ "mug_2", "black mug", "mug", 0.09f, 0.09f, 0.10f, "counter_1", R, false },
	{ "folder_1", "blue folder", "folder", 0.32f, 0.24f, 0.03f, "filing_cabinet_1", B, false },
	{ "folder_2", "red folder", "folder", 0.32f, 0.24f, 0.03f, "bookshelf_1", B, false },
	{ "marker_1", "marker", "marker", 0.13f, 0.02f, 0.02f, "meeting_table_1", R, false },
	{ "stapler_1", "stapler", "stapler", 0.15f, 0.04f, 0.05f, "desk_2", R, false },
	{ "phone_1", "phone", "phone", 0.07f, 0.15f, 0.01f, "desk_1", R, false },
};

static const struct synth__goal_tpl office_goals[] = {
	{ "prepare for a meeting", { "laptop", "notebook", "marker" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "meeting_table_1", "Put the {0} on the meeting table"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "meeting_table_1", "Put the {1} next to the {0}"),
		PICK(2, "Take the {2} from the {s}"),
		USE("write", -1, "whiteboard_1", -1, R, 3.0f, "Write the agenda on the whiteboard with the {2}"),
		PLACE(2, "meeting_table_1", "Put the {2} on the meeting table"),
		END } },
	{ "print a report", { "laptop", "folder" }, {
		USE("type", 0, NULL, -1, B, 3.0f, "Type the report on the {0}"),
		USE("press", -1, "printer_1", -1, R, 1.0f, "Start the print job on the printer"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "side_table_1", "Put the {1} next to the printer"),
		END } },
	{ "make coffee", { "mug" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "counter_1", "Put the {0} under the coffee machine"),
		USE("press", -1, "coffee_machine_1", -1, R, 1.2f, "Press the start button of the coffee machine"),
		PICK(0, "Take the {0} of coffee"),
		PLACE(0, "desk", "Put the {0} on the {f}"),
		END } },
	{ "file documents", { "folder", "folder" }, {
		USE("open", -1, "filing_cabinet_1", -1, L, 1.0f, "Open the top drawer of the filing cabinet"),
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "filing_cabinet_1", "Put the {0} on the filing cabinet"),
		USE("close", -1, "filing_cabinet_1", -1, L, 0.8f, "Close the drawer of the filing cabinet"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "bookshelf_1", "Put the {1} on the bookshelf"),
		END } },
	{ "staple a report", { "stapler", "folder" }, {
		PICK(0, "Take the {0} from the {s}"),
		USE("staple", 1, NULL, -1, B, 2.0f, "Staple the pages in the {1}"),
		PLACE(0, "desk", "Put the {0} back on the {f}"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "bookshelf_1", "File the {1} on the bookshelf"),
		END } },
	{ "take notes", { "notebook", "pen" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "desk", "Put the {0} on the {f}"),
		PICK(1, "Take the {1} from the {s}"),
		USE("write", 0, NULL, -1, R, 3.0f, "Write notes in the {0} with the {1}"),
		PLACE(1, "desk", "Put the {1} down on the {f}"),
		END } },
	{ "make a phone call", { "phone", "notebook" }, {
		PICK(0, "Take the {0} from the {s}"),
		USE("call", 0, NULL, -1, R, 3.0f, "Make a call on the {0}"),
		PLACE(0, "desk", "Put the {0} down on the {f}"),
		USE("write", 1, NULL, -1, R, 2.5f, "Note the call in the {1}"),
		END } },
	{ "pack up after the meeting", { "laptop", "notebook" }, {
		PICK(0, "Take the {0} from the {s}"),
		PLACE(0, "desk", "Put the {0} back on the {f}"),
		PICK(1, "Take the {1} from the {s}"),
		PLACE(1, "bookshelf_1", "Put the {1} back on the bookshelf"),
		END } },
};

#undef PICK
#undef PLACE
#undef USE
#undef END
#undef L
#undef R
#undef B
#undef N

static const struct synth__scene_tpl scenes[SYNTH_NSCENES] = {
	{ "kitchen", 6.0f, 4.6f, 2.5f, kitchen_furn, ARRAY_SIZE(kitchen_furn), kitchen_items,
	  ARRAY_SIZE(kitchen_items), kitchen_goals, ARRAY_SIZE(kitchen_goals) },
	{ "apartment", 7.0f, 5.0f, 2.6f, apartment_furn, ARRAY_SIZE(apartment_furn),
	  apartment_items, ARRAY_SIZE(apartment_items), apartment_goals,
	  ARRAY_SIZE(apartment_goals) },
	{ "office", 6.2f, 5.6f, 2.8f, office_furn, ARRAY_SIZE(office_furn), office_items,
	  ARRAY_SIZE(office_items), office_goals, ARRAY_SIZE(office_goals) },
};

const struct synth__scene_tpl *synth__scene(enum synth_scene sc)
{
	if ((int)sc < 0 || sc >= SYNTH_NSCENES)
		return NULL;
	return &scenes[sc];
}

/* ======================= Building the objects ======================= */

static void yaw_quat(double yaw_deg, versor q)
{
	double h = yaw_deg * M_PI / 360.0;

	q[0] = 0;
	q[1] = 0;
	q[2] = (float)sin(h);
	q[3] = (float)cos(h);
}

static void add_box(struct synth_recording *s, const char *id, const char *name,
		    const char *category, enum synth_kind kind, float x, float y, float z,
		    float yaw_deg, float hx, float hy, float hz)
{
	struct synth_object *o = &s->objects[s->nobjects++];

	memset(o, 0, sizeof(*o));
	o->id = id;
	o->name = name;
	o->category = category;
	o->kind = kind;
	o->half[0] = hx;
	o->half[1] = hy;
	o->half[2] = hz;
	yaw_quat(yaw_deg, o->pose.q);
	o->pose.t[0] = x;
	o->pose.t[1] = y;
	o->pose.t[2] = z;
	o->motion = REC_STATIC;
	o->support = -1;
}

/* Top height of a box. */
static float box_top(const struct synth_object *o)
{
	return o->pose.t[2] + o->half[2];
}

/*
 * The pose of item `it` on top of `sup` at local offset (lx, ly) of the
 * top, in *cand, and whether it is inside the top SPOT_GAP from its edges
 * and SPOT_GAP clear of every object j with on[j] == support at rest[j].
 */
static bool spot_fits(const struct synth_recording *s, const struct pose *rest, const long *on,
		      size_t item, size_t support, float lx, float ly, struct pose *cand)
{
	static const vec3 zero = { 0, 0, 0 };
	const struct synth_object *it = &s->objects[item], *sup = &s->objects[support];
	struct obb ob;
	vec3 lo, hi, local;
	size_t j;

	/* Items keep the support's heading (the walls are axis-aligned). */
	memcpy(cand->q, sup->pose.q, sizeof(cand->q));
	local[0] = lx;
	local[1] = ly;
	local[2] = 0;
	glm_quat_rotatev(cand->q, local, local);
	cand->t[0] = sup->pose.t[0] + local[0];
	cand->t[1] = sup->pose.t[1] + local[1];
	cand->t[2] = box_top(sup) + it->half[2];
	obb_from_local(cand, zero, it->half, &ob);
	obb_aabb(&ob, lo, hi);
	{
		/* Inside the top, SPOT_GAP from its edges (the support is axis-aligned). */
		struct obb sb;
		vec3 slo, shi;

		obb_from_local(&sup->pose, zero, sup->half, &sb);
		obb_aabb(&sb, slo, shi);
		if (lo[0] < slo[0] + SPOT_GAP || hi[0] > shi[0] - SPOT_GAP ||
		    lo[1] < slo[1] + SPOT_GAP || hi[1] > shi[1] - SPOT_GAP)
			return false;
	}
	for (j = 0; j < s->nobjects; j++) {
		struct obb jb;
		vec3 jlo, jhi;

		if (j == item || on[j] != (long)support)
			continue;
		obb_from_local(&rest[j], zero, s->objects[j].half, &jb);
		obb_aabb(&jb, jlo, jhi);
		if (lo[0] < jhi[0] + SPOT_GAP && jlo[0] < hi[0] + SPOT_GAP &&
		    lo[1] < jhi[1] + SPOT_GAP && jlo[1] < hi[1] + SPOT_GAP)
			return false;
	}
	return true;
}

int synth__find_spot(const struct synth_recording *s, const struct pose *rest, const long *on,
		     size_t item, size_t support, struct synth__rng *rng, struct pose *out)
{
	const struct synth_object *sup = &s->objects[support];
	int tries;

	for (tries = 0; tries < SPOT_TRIES; tries++) {
		struct pose cand;
		float lx = (float)synth__rng_range(rng, -sup->half[0], sup->half[0]);
		float ly = (float)synth__rng_range(rng, -sup->half[1], sup->half[1]);

		if (!spot_fits(s, rest, on, item, support, lx, ly, &cand))
			continue;
		*out = cand;
		return 0;
	}
	return ENG_ENOTFOUND;
}

/*
 * The first free spot for `item` on `support` on a 1 cm grid over the
 * top, row by row from the local (-x, -y) corner: for a top where the
 * random tries found none. Returns 0 or ENG_ENOTFOUND.
 */
static int grid_spot(const struct synth_recording *s, const struct pose *rest, const long *on,
		     size_t item, size_t support, struct pose *out)
{
	const struct synth_object *sup = &s->objects[support];
	int nx = (int)(2 * sup->half[0] / GRID_STEP), ny = (int)(2 * sup->half[1] / GRID_STEP);
	int ix, iy;

	for (iy = 0; iy <= ny; iy++)
		for (ix = 0; ix <= nx; ix++)
			if (spot_fits(s, rest, on, item, support, -sup->half[0] + (float)ix * GRID_STEP,
				      -sup->half[1] + (float)iy * GRID_STEP, out))
				return 0;
	return ENG_ENOTFOUND;
}

/*
 * Places item k on `support` when random tries found no room: first on
 * the grid around the items already there; failing that, takes those
 * items off, puts k first and packs them back on the grid in their
 * order. On failure nothing is moved. Returns 0 or ENG_ENOTFOUND.
 */
static int pack_spot(struct synth_recording *s, struct pose *rest, long *on, size_t k,
		     size_t support)
{
	size_t j, n = 0, *moved = NULL;
	int rc;

	if (!grid_spot(s, rest, on, k, support, &s->objects[k].pose))
		return 0;
	moved = malloc(s->nobjects * sizeof(*moved));
	if (!moved)
		return ENG_ENOMEM;
	for (j = 0; j < k; j++)
		/* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): on has s->nobjects > k entries */
		if (on[j] == (long)support) {
			moved[n++] = j;
			on[j] = -1;
		}
	rc = grid_spot(s, rest, on, k, support, &rest[k]);
	on[k] = rc ? -1 : (long)support;
	for (j = 0; j < n && !rc; j++) {
		rc = grid_spot(s, rest, on, moved[j], support, &rest[moved[j]]);
		on[moved[j]] = (long)support;
	}
	if (rc) {
		/* Put everything back as it was. */
		for (j = 0; j < n; j++) {
			on[moved[j]] = (long)support;
			rest[moved[j]] = s->objects[moved[j]].pose;
		}
		on[k] = -1;
	} else {
		for (j = 0; j < n; j++)
			s->objects[moved[j]].pose = rest[moved[j]];
		s->objects[k].pose = rest[k];
	}
	free(moved);
	return rc;
}

static long find_furniture(const struct synth_recording *s, const char *id)
{
	size_t i;

	for (i = 0; i < s->nobjects; i++)
		if (s->objects[i].kind == SYNTH_FURNITURE && !strcmp(s->objects[i].id, id))
			return (long)i;
	return -1;
}

int synth__build_objects(struct synth_recording *s, const struct synth__scene_tpl *sc,
			 struct synth__rng *rng)
{
	float w = sc->room_w, d = sc->room_d, h = sc->wall_h;
	struct pose *rest = NULL;
	long *on = NULL;
	size_t i, n = 4 + sc->nfurn + sc->nitems;
	int rc = 0;

	s->objects = calloc(n, sizeof(*s->objects));
	rest = calloc(n, sizeof(*rest));
	on = malloc(n * sizeof(*on));
	if (!s->objects || !rest || !on) {
		rc = err_set(ENG_ENOMEM, "synth: out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		on[i] = -1;
	/* Walls: 0.1 m thick, just outside [0, w] x [0, d]. */
	add_box(s, "wall_north", "north wall", "wall", SYNTH_WALL, w / 2, d + 0.05f, h / 2, 0,
		w / 2 + 0.1f, 0.05f, h / 2);
	add_box(s, "wall_south", "south wall", "wall", SYNTH_WALL, w / 2, -0.05f, h / 2, 0,
		w / 2 + 0.1f, 0.05f, h / 2);
	add_box(s, "wall_east", "east wall", "wall", SYNTH_WALL, w + 0.05f, d / 2, h / 2, 0,
		0.05f, d / 2 + 0.1f, h / 2);
	add_box(s, "wall_west", "west wall", "wall", SYNTH_WALL, -0.05f, d / 2, h / 2, 0, 0.05f,
		d / 2 + 0.1f, h / 2);
	for (i = 0; i < sc->nfurn; i++) {
		const struct synth__furn_tpl *f = &sc->furn[i];

		add_box(s, f->id, f->name, f->category, SYNTH_FURNITURE, f->x, f->y,
			f->z0 + f->sz / 2, f->yaw_deg, f->sx / 2, f->sy / 2, f->sz / 2);
	}
	for (i = 0; i < s->nobjects; i++)
		rest[i] = s->objects[i].pose;
	for (i = 0; i < sc->nitems; i++) {
		const struct synth__item_tpl *t = &sc->items[i];
		long sup = find_furniture(s, t->start);
		size_t k = s->nobjects;

		if (sup < 0) {
			rc = err_set(ENG_EINVAL, "synth: %s: item '%s' starts on unknown '%s'",
				     sc->name, t->id, t->start);
			goto out;
		}
		add_box(s, t->id, t->name, t->category, SYNTH_ITEM, 0, 0, 0, 0, t->sx / 2, t->sy / 2,
			t->sz / 2);
		rc = synth__find_spot(s, rest, on, k, (size_t)sup, rng, &s->objects[k].pose);
		if (rc == ENG_ENOTFOUND)
			rc = pack_spot(s, rest, on, k, (size_t)sup);
		if (rc == ENG_ENOMEM) {
			rc = err_set(ENG_ENOMEM, "synth: out of memory");
			goto out;
		}
		if (rc) {
			rc = err_set(ENG_EINVAL, "synth: %s: no room for '%s' on '%s'", sc->name,
				     t->id, t->start);
			goto out;
		}
		s->objects[k].support = sup;
		rest[k] = s->objects[k].pose;
		on[k] = sup;
	}
out:
	free(rest);
	free(on);
	return rc;
}
