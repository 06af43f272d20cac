// PlanItem as test/schema-plan.test.ts declares it, version v4.
import { BaseModel, ParseClass, ParseField } from '../../../lib/index.js'

@ParseClass('PlanItem', { clp: { delete: {} } })
export class PlanItem extends BaseModel {
  @ParseField({ type: 'String', unique: true }) declare sku: string
  @ParseField({ type: 'Number' }) declare kind: number
}
