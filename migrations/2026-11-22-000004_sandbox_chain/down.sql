DROP TABLE sandbox_balances;
