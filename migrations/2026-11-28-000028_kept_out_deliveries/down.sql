DROP TABLE email_kept_out_deliveries;
