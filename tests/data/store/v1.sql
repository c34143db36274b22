-- SPDX-License-Identifier: MIT
-- A store of schema version 1 as the version-1 program wrote it: its schema
-- (store_migrations[0], frozen) and rows. ana approved b..01 to b..03 and bob
-- rejected them later, so version 1's "latest decision wins" left them
-- rejected; b..04 has ana's approval only; ana edited b..05 and then approved
-- it; b..06 has a note. tests/unit/test_store.c opens it with this program and
-- checks the upgrade (test_upgrade_from_v1).
BEGIN;
CREATE TABLE recordings ( id TEXT PRIMARY KEY, layout TEXT NOT NULL, root TEXT, t0_ns INTEGER, t1_ns INTEGER, summary_json TEXT, added_at TEXT NOT NULL);
CREATE TABLE runs ( id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, config_json TEXT, brain TEXT, model TEXT, seed INTEGER, engine_version TEXT, status TEXT NOT NULL, counts_json TEXT);
CREATE TABLE qa ( id TEXT PRIMARY KEY, run_id INTEGER REFERENCES runs(id), recording_id TEXT NOT NULL REFERENCES recordings(id), category TEXT NOT NULL, subtask TEXT NOT NULL, metric TEXT NOT NULL CHECK (metric IN ('approx','relative')), t_ns INTEGER NOT NULL, clip_start_ns INTEGER, clip_end_ns INTEGER, frames_json TEXT, target TEXT, question TEXT NOT NULL, question_edited TEXT, options_json TEXT NOT NULL, answer_index INTEGER, answer_json TEXT, gt_json TEXT, qc_json TEXT, status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected', 'edited','superseded','dropped')), drop_reason TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX qa_task ON qa(category, subtask, metric, status);
CREATE INDEX qa_recording ON qa(recording_id, t_ns, id);
CREATE TABLE reviews ( id INTEGER PRIMARY KEY, qa_id TEXT NOT NULL REFERENCES qa(id), reviewer TEXT NOT NULL, decision TEXT NOT NULL CHECK (decision IN ('approve','reject','edit', 'flag','note','answer')), reason TEXT, blind_answer_index INTEGER, edit_before TEXT, edit_after TEXT, note TEXT, started_at TEXT, decided_at TEXT NOT NULL);
CREATE INDEX reviews_qa ON reviews(qa_id, reviewer);
CREATE INDEX reviews_reviewer ON reviews(reviewer);
CREATE TABLE traces ( qa_id TEXT PRIMARY KEY REFERENCES qa(id), trace_json TEXT NOT NULL);
CREATE TABLE llm_cache ( key TEXT PRIMARY KEY, request_json TEXT, response_json TEXT NOT NULL, status INTEGER NOT NULL, created_at TEXT NOT NULL, latency_ms INTEGER);
CREATE TABLE drops ( id INTEGER PRIMARY KEY, run_id INTEGER, recording_id TEXT NOT NULL, category TEXT NOT NULL, subtask TEXT NOT NULL, metric TEXT NOT NULL, reason TEXT NOT NULL, t_ns INTEGER, target TEXT);
CREATE UNIQUE INDEX drops_candidate ON drops(recording_id, category, subtask, metric, reason, coalesce(t_ns, 0), coalesce(target, ''));

INSERT INTO recordings VALUES ('rec1', 'proxima-recording/1', '/data/rec1', 0, 60000000000, '{}', '2025-03-01T09:00:00.000Z');
INSERT INTO runs VALUES (1, '2025-03-01T09:00:01.000Z', '2025-03-01T09:05:00.000Z', '{"tasks":"intention"}', 'local', 'planner', 7, '0.1.0', 'ok', '{"new":6}');
INSERT INTO qa VALUES ('b000000000000001', 1, 'rec1', 'intention', 'head_turn', 'approx', 10000000000, 2000000000, 10000000000, '[1,2]', 'mug', 'Where will the wearer turn?', NULL, '["Left","Right","Ahead","Back","Around"]', 1, '{"dir":"left"}', '{"yaw":95}', '{"z":0.1}', 'rejected', NULL, '2025-03-01T09:04:00.000Z', '2025-03-02T10:00:05.000Z');
INSERT INTO qa VALUES ('b000000000000002', 1, 'rec1', 'intention', 'head_turn', 'approx', 20000000000, 12000000000, 20000000000, '[1,2]', 'mug', 'Where will the wearer turn?', NULL, '["Left","Right","Ahead","Back","Around"]', 1, '{"dir":"left"}', '{"yaw":95}', '{"z":0.1}', 'rejected', NULL, '2025-03-01T09:04:00.000Z', '2025-03-02T10:01:05.000Z');
INSERT INTO qa VALUES ('b000000000000003', 1, 'rec1', 'intention', 'head_turn', 'approx', 30000000000, 22000000000, 30000000000, '[1,2]', 'mug', 'Where will the wearer turn?', NULL, '["Left","Right","Ahead","Back","Around"]', 1, '{"dir":"left"}', '{"yaw":95}', '{"z":0.1}', 'rejected', NULL, '2025-03-01T09:04:00.000Z', '2025-03-02T10:02:05.000Z');
INSERT INTO qa VALUES ('b000000000000004', 1, 'rec1', 'intention', 'head_turn', 'approx', 40000000000, 32000000000, 40000000000, '[1,2]', 'mug', 'Where will the wearer turn?', NULL, '["Left","Right","Ahead","Back","Around"]', 1, '{"dir":"left"}', '{"yaw":95}', '{"z":0.1}', 'approved', NULL, '2025-03-01T09:04:00.000Z', '2025-03-02T10:03:00.000Z');
INSERT INTO qa VALUES ('b000000000000005', 1, 'rec1', 'intention', 'head_turn', 'approx', 50000000000, 42000000000, 50000000000, '[1,2]', 'mug', 'Where will the wearer turn?', 'Where will the wearer turn next?', '["Left","Right","Ahead","Back","Around"]', 1, '{"dir":"left"}', '{"yaw":95}', '{"z":0.1}', 'approved', NULL, '2025-03-01T09:04:00.000Z', '2025-03-02T10:04:05.000Z');
INSERT INTO qa VALUES ('b000000000000006', 1, 'rec1', 'intention', 'head_turn', 'approx', 55000000000, 47000000000, 55000000000, '[1,2]', 'mug', 'Where will the wearer turn?', NULL, '["Left","Right","Ahead","Back","Around"]', 1, '{"dir":"left"}', '{"yaw":95}', '{"z":0.1}', 'pending', NULL, '2025-03-01T09:04:00.000Z', '2025-03-01T09:04:00.000Z');
INSERT INTO reviews VALUES (1, 'b000000000000001', 'ana', 'approve', NULL, NULL, NULL, NULL, NULL, '2025-03-02T09:59:50.000Z', '2025-03-02T10:00:00.000Z');
INSERT INTO reviews VALUES (2, 'b000000000000001', 'bob', 'reject', 'the mug is hidden', NULL, NULL, NULL, NULL, '2025-03-02T10:00:01.000Z', '2025-03-02T10:00:05.000Z');
INSERT INTO reviews VALUES (3, 'b000000000000002', 'ana', 'approve', NULL, NULL, NULL, NULL, NULL, '2025-03-02T10:00:50.000Z', '2025-03-02T10:01:00.000Z');
INSERT INTO reviews VALUES (4, 'b000000000000002', 'bob', 'reject', 'wrong turn', NULL, NULL, NULL, NULL, '2025-03-02T10:01:01.000Z', '2025-03-02T10:01:05.000Z');
INSERT INTO reviews VALUES (5, 'b000000000000003', 'ana', 'approve', NULL, NULL, NULL, NULL, NULL, '2025-03-02T10:01:50.000Z', '2025-03-02T10:02:00.000Z');
INSERT INTO reviews VALUES (6, 'b000000000000003', 'bob', 'reject', 'ambiguous', NULL, NULL, NULL, NULL, '2025-03-02T10:02:01.000Z', '2025-03-02T10:02:05.000Z');
INSERT INTO reviews VALUES (7, 'b000000000000004', 'ana', 'approve', NULL, NULL, NULL, NULL, NULL, '2025-03-02T10:02:50.000Z', '2025-03-02T10:03:00.000Z');
INSERT INTO reviews VALUES (8, 'b000000000000005', 'ana', 'edit', NULL, NULL, 'Where will the wearer turn?', 'Where will the wearer turn next?', NULL, '2025-03-02T10:03:50.000Z', '2025-03-02T10:04:00.000Z');
INSERT INTO reviews VALUES (9, 'b000000000000005', 'ana', 'approve', NULL, NULL, NULL, NULL, NULL, '2025-03-02T10:04:01.000Z', '2025-03-02T10:04:05.000Z');
INSERT INTO reviews VALUES (10, 'b000000000000006', 'bob', 'note', NULL, NULL, NULL, NULL, 'look again at T', '2025-03-02T10:05:00.000Z', '2025-03-02T10:05:02.000Z');
INSERT INTO traces VALUES ('b000000000000001', '{"messages":[]}');
INSERT INTO drops VALUES (1, 1, 'rec1', 'intention', 'head_turn', 'approx', 'ambiguous_margin', 12000000000, 'mug');
PRAGMA user_version = 1;
PRAGMA application_id = 1347573837;
COMMIT;
