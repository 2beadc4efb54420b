"""The bundled Neo4j 5.26 server (graphs/neo4j/server) answers real Cypher over Bolt without auth."""

import uuid

import pytest
from neo4j import GraphDatabase

from tests.neo4j_fixture import neo4j_uri  # noqa: F401

pytestmark = pytest.mark.neo4j


def test_parameterised_node_round_trip(neo4j_uri: str) -> None:  # noqa: F811
    marker = f"evigraph-test-{uuid.uuid4()}"
    with GraphDatabase.driver(neo4j_uri, auth=None) as driver:
        driver.verify_connectivity()
        created = driver.execute_query(
            "CREATE (n:EviGraphTestNode {marker: $marker, label: $label}) RETURN n.marker AS marker",
            marker=marker,
            label="aspirin",
        )
        assert [record["marker"] for record in created.records] == [marker]

        read_back = driver.execute_query(
            "MATCH (n:EviGraphTestNode {marker: $marker}) RETURN n.label AS label", marker=marker
        )
        assert [record["label"] for record in read_back.records] == ["aspirin"]

        deleted = driver.execute_query(
            "MATCH (n:EviGraphTestNode {marker: $marker}) DETACH DELETE n RETURN count(*) AS deleted",
            marker=marker,
        )
        assert deleted.records[0]["deleted"] == 1

        remaining = driver.execute_query(
            "MATCH (n:EviGraphTestNode {marker: $marker}) RETURN count(n) AS remaining", marker=marker
        )
        assert remaining.records[0]["remaining"] == 0


def test_server_is_neo4j_5_26_community(neo4j_uri: str) -> None:  # noqa: F811
    with GraphDatabase.driver(neo4j_uri, auth=None) as driver:
        components = driver.execute_query(
            "CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition"
        )
    kernel = components.records[0]
    assert kernel["name"] == "Neo4j Kernel"
    assert kernel["edition"] == "community"
    assert kernel["versions"][0].startswith("5.26.")
