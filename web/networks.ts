// The chains a price can be paid on, by their CAIP-2 identifiers.

const NETWORK_NAMES: Record<string, string> = {
  'eip155:8453': 'Base',
  'eip155:84532': 'Base Sepolia (test network)',
  'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp': 'Solana',
  'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1': 'Solana devnet (test network)',
};

export const networkName = (network: string) => NETWORK_NAMES[network] ?? network;
export const isEvm = (network: string) => network.startsWith('eip155:');
export const isSolana = (network: string) => network.startsWith('solana:');
