DROP TABLE agents;
DROP TABLE sponsors;
