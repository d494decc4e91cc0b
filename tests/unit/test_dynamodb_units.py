"""AWS's capacity rules as the DynamoDB bench applies them (agentmem_dev.bench.dynamodb_units)."""

from __future__ import annotations

from agentmem.adapters.aws.dynamodb_schema import memory_table_request, session_table_request
from agentmem_dev.bench.dynamodb_units import Schema, item_size, read_units, value_size, write_units


def test_item_size_follows_the_documented_rules() -> None:
    assert value_size({"S": "héllo"}) == 6  # UTF-8 bytes
    assert value_size({"B": b"\x00" * 2048}) == 2048
    assert value_size({"BOOL": True}) == 1 and value_size({"NULL": True}) == 1
    assert value_size({"N": "12345"}) == 4  # (5 digits + 1) / 2 + 1
    assert value_size({"L": [{"S": "ab"}, {"S": "c"}]}) == 3 + (1 + 2) + (1 + 1)
    assert value_size({"M": {"k": {"S": "v"}}}) == 3 + 1 + 1 + 1
    assert item_size({"pk": {"S": "p"}, "count": {"N": "7"}}) == (2 + 1) + (5 + 2)
    assert item_size(None) == 0


def test_units_round_up_per_request_with_a_minimum_of_one() -> None:
    assert read_units(0, consistent=True) == 1.0  # an absent item still costs a unit
    assert read_units(4096, consistent=True) == 1.0 and read_units(4097, consistent=True) == 2.0
    assert read_units(4097, consistent=False) == 1.0  # eventually consistent: half
    assert write_units(1) == 1 and write_units(1024) == 1 and write_units(1025) == 2


def test_index_writes_follow_sparse_membership_and_projection() -> None:
    schema = Schema.from_request(memory_table_request("m"))
    base = {"pk": {"S": "P"}, "sk": {"S": "MEM#1"}, "status": {"S": "active"}, "blob": {"B": b"x" * 3000}}
    slot = {**base, "slot_pk": {"S": "P#policy"}, "slot_sk": {"S": "1"}}
    keyed = {**base, "mem_key": {"S": "city"}}
    # not in any index: no index write
    assert schema.index_write_units(None, base) == {}
    # into the slot_lists index, which projects the record's attributes but not the rest (the
    # vector): the entry is the keys and the status, one unit, whatever the blob
    assert schema.index_write_units(None, slot) == {"slot_lists": 1}
    # a projected attribute of 3 KB makes the entry 3 units; leaving (superseded): one delete
    wordy = {**slot, "content": {"S": "x" * 3000}}
    assert schema.index_write_units(None, wordy) == {"slot_lists": 3}
    assert schema.index_write_units(wordy, base) == {"slot_lists": 3}
    # an ALL-projected index (the session table's by_session) copies the whole item
    sessions = Schema.from_request(session_table_request("s"))
    turn = {**base, "session_sk": {"S": "S#1"}}
    assert sessions.index_write_units(None, turn) == {"by_session": 3}
    # by_key projects keys + status only: a small entry, whatever the item's size
    assert schema.index_write_units(None, keyed) == {"by_key": 1}
    # nothing projected changed: no index write
    assert schema.index_write_units(keyed, {**keyed, "blob": {"B": b"y" * 10}}) == {}
    # the index key changed: delete + put
    assert schema.index_write_units(keyed, {**keyed, "mem_key": {"S": "town"}}) == {"by_key": 2}
