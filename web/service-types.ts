// The shapes of what the service publishes (the catalog at /v1/discovery, the API description at
// /openapi.json, error bodies, the dev payer) and the page's own records built from them.
import type { PaymentRequired } from '@x402/core/types';

export interface PropertySchema {
  type?: 'string' | 'integer' | 'number' | 'boolean' | 'array';
  format?: string;
  description?: string;
  enum?: Array<string | number>;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  default?: string | number | boolean;
  items?: PropertySchema;
  minItems?: number;
  maxItems?: number;
}

export interface FormSchema { required?: string[]; properties: Record<string, PropertySchema> }

export interface CatalogItem {
  resource: string;
  category: string;
  accepts: Array<{ amount: string; network: string; payTo: string }>;
  metadata: {
    description: string;
    inputSchema: FormSchema;
    priceUsd: string;
    pricingModel: 'flat' | 'per-page';
    pricingNote?: string;
    thirdParty?: { sendsContent?: boolean; available?: boolean; unavailableReason?: string; engine?: string };
    report?: { header: string; description: string };
  };
}

export interface OpenApiDocument {
  paths: Record<string, { post?: { summary?: string; requestBody?: { content?: Record<string, { schema?: FormSchema }> } } }>;
}

export interface Operation {
  path: string;
  name: string;
  title: string;
  item: CatalogItem;
  schema: FormSchema;
}

export interface ErrorBody { error?: { code?: string; status?: number; message?: string; field?: string } }

export interface Quote {
  operation: Operation;
  body: FormData;
  paymentRequired: PaymentRequired;
}

export interface DevPayer { network: string; address: string; balance: string }
