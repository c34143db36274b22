-- A small proxima store (schema version 2) for the stats CLI tests: 10 QAs in
-- two groups, 3 dropped candidates, 4 reviews by two reviewers. Load it with
-- sqlite3 FILE < small.sql. Handmade; the expected figures are in test_stats.sh.
-- Schema version 2: the statuses are written by hand for the stats arithmetic
-- (alice's rejection and bob's approval of ...c1 would make it a conflict under
-- the review policy, which tests/unit/test_store.c tests; here it stays approved).
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE recordings ( id TEXT PRIMARY KEY, layout TEXT NOT NULL, root TEXT, t0_ns INTEGER, t1_ns INTEGER, summary_json TEXT, added_at TEXT NOT NULL);
INSERT INTO recordings VALUES('adt_apartment_seq134','adt','recordings/seq134',0,60000000000,'{}','2025-01-01T00:00:00.000Z');
CREATE TABLE runs ( id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, config_json TEXT, brain TEXT, model TEXT, seed INTEGER, engine_version TEXT, status TEXT NOT NULL, counts_json TEXT);
INSERT INTO runs VALUES(1,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z','{}','local',NULL,1,'0.1.0','ok','{"qa":10}');
CREATE TABLE qa ( id TEXT PRIMARY KEY, run_id INTEGER REFERENCES runs(id), recording_id TEXT NOT NULL REFERENCES recordings(id), category TEXT NOT NULL, subtask TEXT NOT NULL, metric TEXT NOT NULL CHECK (metric IN ('approx','relative')), t_ns INTEGER NOT NULL, clip_start_ns INTEGER, clip_end_ns INTEGER, frames_json TEXT, target TEXT, question TEXT NOT NULL, question_edited TEXT, options_json TEXT NOT NULL, answer_index INTEGER, answer_json TEXT, gt_json TEXT, qc_json TEXT, status TEXT NOT NULL CHECK (status IN ('pending','approved','rejected', 'edited','superseded','dropped','conflict')), drop_reason TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
INSERT INTO qa VALUES('00000000000000c0',1,'adt_apartment_seq134','intention','head_turn','approx',10000000000,2000000000,10000000000,'[0,1000000000]','mug','Where will the wearer look next?',NULL,'["Front","Left","Right","Back","Keep facing forward"]',0,'{}','{}','{"z":-0.25}','approved',NULL,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z');
INSERT INTO qa VALUES('00000000000000c1',1,'adt_apartment_seq134','intention','head_turn','approx',11000000000,3000000000,11000000000,'[0,1000000000]','mug','Where will the wearer look next?',NULL,'["Front","Left","Right","Back","Keep facing forward"]',0,'{}','{}','{"z":0.5}','approved',NULL,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z');
INSERT INTO qa VALUES('00000000000000c2',1,'adt_apartment_seq134','intention','head_turn','approx',12000000000,4000000000,12000000000,'[0,1000000000]','mug','Where will the wearer look next?',NULL,'["Front","Left","Right","Back","Keep facing forward"]',1,'{}','{}','{"z":-0.25}','pending',NULL,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z');
INSERT INTO qa VALUES('00000000000000c3',1,'adt_apartment_seq134','intention','head_turn','approx',13000000000,5000000000,13000000000,'[0,1000000000]','mug','Where will the wearer look next?',NULL,'["Front","Left","Right","Back","Keep facing forward"]',2,'{}','{}','{"z":0.5}','pending',NULL,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z');
INSERT INTO qa VALUES('00000000000000c4',1,'adt_apartment_seq134','intention','head_turn','approx',14000000000,6000000000,14000000000,'[0,1000000000]','mug','Where will the wearer look next?',NULL,'["Front","Left","Right","Back","Keep facing forward"]',3,'{}','{}','{"z":-0.25}','pending',NULL,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z');
INSERT INTO qa VALUES('00000000000000c5',1,'adt_apartment_seq134','intention','head_turn','approx',15000000000,7000000000,15000000000,'[0,1000000000]','mug','Where will the wearer look next?',NULL,'["Front","Left","Right","Back","Keep facing forward"]',4,'{}','{}','{"z":0.5}','pending',NULL,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z');
INSERT INTO qa VALUES('00000000000000c6',1,'adt_apartment_seq134','exploration','navigate','relative',16000000000,8000000000,16000000000,'[0,1000000000]','mug','Where will the wearer look next?',NULL,'["Front","Left","Right","Back","Keep facing forward"]',0,'{}','{}','{"z":-0.25}','pending',NULL,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z');
INSERT INTO qa VALUES('00000000000000c7',1,'adt_apartment_seq134','exploration','navigate','relative',17000000000,9000000000,17000000000,'[0,1000000000]','mug','Where will the wearer look next?',NULL,'["Front","Left","Right","Back","Keep facing forward"]',0,'{}','{}','{"z":0.5}','pending',NULL,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z');
INSERT INTO qa VALUES('00000000000000c8',1,'adt_apartment_seq134','exploration','navigate','relative',18000000000,10000000000,18000000000,'[0,1000000000]','mug','Where will the wearer look next?',NULL,'["Front","Left","Right","Back","Keep facing forward"]',0,'{}','{}','{"z":-0.25}','pending',NULL,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z');
INSERT INTO qa VALUES('00000000000000c9',1,'adt_apartment_seq134','exploration','navigate','relative',19000000000,11000000000,19000000000,'[0,1000000000]','mug','Where will the wearer look next?',NULL,'["Front","Left","Right","Back","Keep facing forward"]',1,'{}','{}','{"z":0.5}','pending',NULL,'2025-01-01T00:00:00.000Z','2025-01-01T00:00:00.000Z');
CREATE TABLE reviews ( id INTEGER PRIMARY KEY, qa_id TEXT NOT NULL REFERENCES qa(id), reviewer TEXT NOT NULL, decision TEXT NOT NULL CHECK (decision IN ('approve','reject','edit', 'flag','note','answer')), reason TEXT, blind_answer_index INTEGER, edit_before TEXT, edit_after TEXT, note TEXT, started_at TEXT, decided_at TEXT NOT NULL, adjudication INTEGER NOT NULL DEFAULT 0 CHECK (adjudication IN (0, 1)));
INSERT INTO reviews VALUES(1,'00000000000000c0','alice','approve',NULL,0,NULL,NULL,NULL,'2023-11-14T22:13:20.000Z','2023-11-14T22:13:24.000Z',0);
INSERT INTO reviews VALUES(2,'00000000000000c1','alice','reject','ambiguous',2,NULL,NULL,NULL,'2023-11-14T22:13:30.000Z','2023-11-14T22:13:36.000Z',0);
INSERT INTO reviews VALUES(3,'00000000000000c0','bob','approve',NULL,0,NULL,NULL,NULL,'2023-11-14T22:13:40.000Z','2023-11-14T22:13:42.000Z',0);
INSERT INTO reviews VALUES(4,'00000000000000c1','bob','approve',NULL,0,NULL,NULL,NULL,'2023-11-14T22:13:40.000Z','2023-11-14T22:13:42.000Z',0);
CREATE TABLE traces ( qa_id TEXT PRIMARY KEY REFERENCES qa(id), trace_json TEXT NOT NULL);
INSERT INTO traces VALUES('00000000000000c0','{"messages":[]}');
INSERT INTO traces VALUES('00000000000000c1','{"messages":[]}');
INSERT INTO traces VALUES('00000000000000c2','{"messages":[]}');
INSERT INTO traces VALUES('00000000000000c3','{"messages":[]}');
INSERT INTO traces VALUES('00000000000000c4','{"messages":[]}');
INSERT INTO traces VALUES('00000000000000c5','{"messages":[]}');
INSERT INTO traces VALUES('00000000000000c6','{"messages":[]}');
INSERT INTO traces VALUES('00000000000000c7','{"messages":[]}');
INSERT INTO traces VALUES('00000000000000c8','{"messages":[]}');
INSERT INTO traces VALUES('00000000000000c9','{"messages":[]}');
CREATE TABLE llm_cache ( key TEXT PRIMARY KEY, request_json TEXT, response_json TEXT NOT NULL, status INTEGER NOT NULL, created_at TEXT NOT NULL, latency_ms INTEGER);
CREATE TABLE drops ( id INTEGER PRIMARY KEY, run_id INTEGER, recording_id TEXT NOT NULL, category TEXT NOT NULL, subtask TEXT NOT NULL, metric TEXT NOT NULL, reason TEXT NOT NULL, t_ns INTEGER, target TEXT, detail TEXT);
INSERT INTO drops VALUES(1,1,'adt_apartment_seq134','intention','head_turn','approx','ambiguous_margin',1,'cup',NULL);
INSERT INTO drops VALUES(2,1,'adt_apartment_seq134','intention','head_turn','approx','ambiguous_margin',2,'cup',NULL);
INSERT INTO drops VALUES(3,1,'adt_apartment_seq134','exploration','navigate','relative','no_path',3,'sofa',NULL);
CREATE INDEX qa_task ON qa(category, subtask, metric, status);
CREATE INDEX qa_recording ON qa(recording_id, t_ns, id);
CREATE INDEX reviews_qa ON reviews(qa_id, reviewer);
CREATE INDEX reviews_reviewer ON reviews(reviewer);
CREATE UNIQUE INDEX drops_candidate ON drops(recording_id, category, subtask, metric, reason, coalesce(t_ns, 0), coalesce(target, ''));
CREATE INDEX qa_status_order ON qa(status, recording_id, t_ns, id);
CREATE TABLE qa_counts ( recording_id TEXT NOT NULL, category TEXT NOT NULL, subtask TEXT NOT NULL, metric TEXT NOT NULL, status TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (recording_id, category, subtask, metric, status)) WITHOUT ROWID;
INSERT INTO qa_counts SELECT recording_id, category, subtask, metric, status, count(*) FROM qa GROUP BY 1, 2, 3, 4, 5;
CREATE TRIGGER qa_counts_insert AFTER INSERT ON qa BEGIN INSERT INTO qa_counts VALUES (new.recording_id, new.category, new.subtask, new.metric, new.status, 1) ON CONFLICT DO UPDATE SET n = n + 1; END;
CREATE TRIGGER qa_counts_delete AFTER DELETE ON qa BEGIN UPDATE qa_counts SET n = n - 1 WHERE recording_id = old.recording_id AND category = old.category AND subtask = old.subtask AND metric = old.metric AND status = old.status; END;
CREATE TRIGGER qa_counts_update AFTER UPDATE OF recording_id, category, subtask, metric, status ON qa WHEN old.recording_id IS NOT new.recording_id OR old.category IS NOT new.category OR old.subtask IS NOT new.subtask OR old.metric IS NOT new.metric OR old.status IS NOT new.status BEGIN UPDATE qa_counts SET n = n - 1 WHERE recording_id = old.recording_id AND category = old.category AND subtask = old.subtask AND metric = old.metric AND status = old.status; INSERT INTO qa_counts VALUES (new.recording_id, new.category, new.subtask, new.metric, new.status, 1) ON CONFLICT DO UPDATE SET n = n + 1; END;
COMMIT;
PRAGMA user_version = 3;
PRAGMA application_id = 1347573837;
