//! ERC-20 transfers as signed EIP-1559 transactions.

use alloy_consensus::{SignableTransaction, TxEip1559, TxEnvelope};
use alloy_eips::eip2718::Encodable2718;
use alloy_primitives::{Address, Bytes, TxKind};
use alloy_signer::SignerSync;
use alloy_signer_local::PrivateKeySigner;
use alloy_sol_types::{sol, SolCall};
use domain::EvmAddress;
use ports::{SignedTransfer, TransferCall};

sol! {
    /// The ERC-20 function a wallet transfer calls.
    function transfer(address to, uint256 amount) returns (bool);
}

fn address(evm: &EvmAddress) -> Address {
    Address::from(*evm.as_bytes())
}

/// Signs `call` as `signer`: an EIP-1559 transaction to the token carrying `transfer(to, amount)`.
pub(crate) fn sign_transfer(
    signer: &PrivateKeySigner,
    call: &TransferCall,
) -> Result<SignedTransfer, alloy_signer::Error> {
    let input = transferCall {
        to: address(&call.to),
        amount: call.amount,
    }
    .abi_encode();
    let transaction = TxEip1559 {
        chain_id: call.chain_id,
        nonce: call.nonce,
        gas_limit: call.gas_limit,
        max_fee_per_gas: call.fees.max_fee_per_gas,
        max_priority_fee_per_gas: call.fees.max_priority_fee_per_gas,
        to: TxKind::Call(address(&call.token)),
        value: Default::default(),
        access_list: Default::default(),
        input: Bytes::from(input),
    };
    let signature = signer.sign_hash_sync(&transaction.signature_hash())?;
    let envelope = TxEnvelope::from(transaction.into_signed(signature));
    Ok(SignedTransfer {
        from: EvmAddress::from_bytes(signer.address().into()),
        token: call.token,
        to: call.to,
        amount: call.amount,
        nonce: call.nonce,
        fees: call.fees,
        raw: envelope.encoded_2718(),
        hash: envelope.tx_hash().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_consensus::transaction::SignerRecoverable;
    use alloy_consensus::Transaction;
    use alloy_eips::eip2718::Decodable2718;
    use domain::FeeQuote;
    use domain::U256;

    #[test]
    fn a_signed_transfer_decodes_to_the_call_and_recovers_its_signer() {
        let signer = PrivateKeySigner::random();
        let call = TransferCall {
            chain_id: 8453,
            nonce: 7,
            token: EvmAddress::from_bytes([0xaa; 20]),
            to: EvmAddress::from_bytes([0xbb; 20]),
            amount: U256::from(1_500_000u64),
            gas_limit: 100_000,
            fees: FeeQuote {
                max_fee_per_gas: 2_000_000_000,
                max_priority_fee_per_gas: 1_000_000_000,
            },
        };
        let signed = sign_transfer(&signer, &call).expect("signed");
        let decoded = TxEnvelope::decode_2718(&mut signed.raw.as_slice()).expect("decodes");
        assert_eq!(decoded.tx_hash().to_string(), signed.hash);
        assert_eq!(
            decoded.recover_signer().expect("recovers"),
            signer.address()
        );
        assert_eq!(decoded.chain_id(), Some(8453));
        assert_eq!(decoded.nonce(), 7);
        assert_eq!(decoded.to(), Some(Address::from([0xaa; 20])));
        let transfer = transferCall::abi_decode(decoded.input()).expect("ERC-20 transfer");
        assert_eq!(
            (transfer.to, transfer.amount),
            (Address::from([0xbb; 20]), U256::from(1_500_000u64))
        );
        assert!(signed.hash.starts_with("0x") && signed.hash.len() == 66);
    }
}
